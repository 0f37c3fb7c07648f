/**
 * A WebSocket client for the streaming server's forms that kubectl does not speak (the
 * kubelet's port-forward channels, base64 channels, a refused protocol), run as a program in
 * the daemon's network namespace: `node ws-probe.js <url> <protocol or ""> <messages JSON>`.
 * The steps of the JSON array are taken in order once the socket is open: `{ "hex": ... }`
 * sends a binary message, `{ "text": ... }` a text one, `{ "waitFor": "..." }` waits until the
 * messages received so far (each without its first byte, the channel) hold that text, and
 * `{ "close": true }` closes the socket. Each received message is printed as a JSON line
 * (`{ "hex" }` or `{ "text" }`), then `{ "close": code }`, or `{ "status": code }` when the
 * upgrade is refused. It gives up after 15 s (`{ "timeout": true }`).
 */
import WebSocket from "ws";

function main(): void {
  const [url, protocol, messages] = process.argv.slice(2);
  const print = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const ws = new WebSocket(url, protocol ? [protocol] : []);
  const timer = setTimeout(() => {
    print({ timeout: true });
    process.exit(2);
  }, 15_000);
  type Step = { hex?: string; text?: string; waitFor?: string; close?: boolean };
  const steps = JSON.parse(messages || "[]") as Step[];
  let received = "";
  let waiting: Step | undefined;
  // takes the steps up to the next wait that the messages so far do not satisfy
  const proceed = () => {
    if (waiting?.waitFor !== undefined && !received.includes(waiting.waitFor)) return;
    waiting = undefined;
    for (let step = steps.shift(); step; step = steps.shift()) {
      if (step.waitFor !== undefined && !received.includes(step.waitFor)) return void (waiting = step);
      if (step.close) ws.close(1000);
      else if (step.waitFor === undefined) ws.send(step.hex !== undefined ? Buffer.from(step.hex, "hex") : (step.text ?? ""), { binary: step.hex !== undefined });
    }
  };
  ws.on("open", proceed);
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    print(isBinary ? { hex: data.toString("hex") } : { text: data.toString("utf8") });
    received += data.subarray(1).toString("utf8");
    proceed();
  });
  ws.on("unexpected-response", (_req, res) => {
    print({ status: res.statusCode });
    clearTimeout(timer);
    process.exit(0);
  });
  ws.on("close", (code: number) => {
    print({ close: code });
    clearTimeout(timer);
    process.exit(0);
  });
  ws.on("error", (err: Error) => print({ error: err.message }));
}

if (process.argv[1]?.endsWith("ws-probe.js")) main();
