/**
 * A WebSocket client for the streaming server's forms that kubectl does not speak (the
 * kubelet's port-forward channels, base64 channels, a refused protocol), run as a program in
 * the daemon's network namespace: `node ws-probe.js <url> <protocol or ""> <messages JSON>`.
 * Each message of the JSON array is sent once the socket is open (`{ "hex": ... }` binary,
 * `{ "text": ... }` text); each received one is printed as a JSON line (`{ "hex" }` or
 * `{ "text" }`), then `{ "close": code }`, or `{ "status": code }` when the upgrade is refused.
 * It gives up after 15 s.
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
  ws.on("open", () => {
    for (const m of JSON.parse(messages || "[]") as { hex?: string; text?: string }[]) ws.send(m.hex !== undefined ? Buffer.from(m.hex, "hex") : (m.text ?? ""), { binary: m.hex !== undefined });
  });
  ws.on("message", (data: Buffer, isBinary: boolean) => print(isBinary ? { hex: data.toString("hex") } : { text: data.toString("utf8") }));
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
