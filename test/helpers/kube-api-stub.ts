/**
 * A stand-in for the Kubernetes API server, just enough for the real kubectl's exec, attach and
 * port-forward (client-go's remotecommand and portforward clients): `GET .../pods/<name>`
 * answers a running pod with one container, and the upgrade request of
 * `.../pods/<name>/exec|attach|portforward?...` is passed byte for byte to the streaming URL
 * the test got from the CRI call, as the API server's proxy to the kubelet passes it through.
 *
 * Run as a program (`node kube-api-stub.js <target-file> [<ca-file>]`), in the network namespace of the
 * daemon under test (its streaming server listens there): it prints its port, then serves;
 * each proxied request goes to the URL in `<target-file>` at that moment (the test writes it
 * before each kubectl call). An https:// target is dialled with TLS, its certificate verified
 * against `<ca-file>` and the target's host, as the kubelet's proxy verifies the runtime's.
 * Requests are logged on stderr.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import type { Duplex } from "node:stream";

const POD = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/?]+)(\/(exec|attach|portforward))?(\?.*)?$/;

function podJson(namespace: string, name: string) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, uid: "00000000-0000-0000-0000-000000000001", resourceVersion: "1" },
    spec: { containers: [{ name: "c", image: "busybox", stdin: true, tty: false }] },
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [{ name: "c", ready: true, started: true, restartCount: 0, image: "busybox", imageID: "", state: { running: {} } }] },
  };
}

/** Discovery, which kubectl reads before it names a pod: the core group with pods and their subresources. */
const DISCOVERY: Record<string, object> = {
  "/api": { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1" }] },
  "/apis": { kind: "APIGroupList", apiVersion: "v1", groups: [] },
  "/api/v1": {
    kind: "APIResourceList", groupVersion: "v1",
    resources: [
      { name: "pods", singularName: "pod", namespaced: true, kind: "Pod", verbs: ["get", "list"], shortNames: ["po"] },
      { name: "pods/exec", singularName: "", namespaced: true, kind: "PodExecOptions", verbs: ["create", "get"] },
      { name: "pods/attach", singularName: "", namespaced: true, kind: "PodAttachOptions", verbs: ["create", "get"] },
      { name: "pods/portforward", singularName: "", namespaced: true, kind: "PodPortForwardOptions", verbs: ["create", "get"] },
    ],
  },
};

function proxyUpgrade(req: IncomingMessage, client: Duplex, head: Buffer, targetFile: string, ca: string | undefined): void {
  const target = new URL(readFileSync(targetFile, "utf8").trim());
  const query = (req.url ?? "").includes("?") ? (req.url ?? "").slice((req.url ?? "").indexOf("?")) : "";
  const dial = (ready: () => void): Socket =>
    target.protocol === "https:"
      ? connectTls({ port: Number(target.port), host: target.hostname, ca: ca ? readFileSync(ca) : undefined }, ready)
      : connect(Number(target.port), target.hostname, ready);
  const upstream = dial(() => {
    const lines = [`${req.method} ${target.pathname}${query} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i];
      lines.push(`${name}: ${name.toLowerCase() === "host" ? target.host : req.rawHeaders[i + 1]}`);
    }
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  const end = () => {
    upstream.destroy();
    client.destroy();
  };
  upstream.on("error", end);
  client.on("error", end);
  upstream.on("close", () => client.end());
  client.on("close", () => upstream.end());
}

function main(): void {
  const [targetFile, ca] = process.argv.slice(2);
  const server = createServer((req, res) => {
    process.stderr.write(`${req.method} ${req.url}\n`);
    const m = POD.exec(req.url ?? "");
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && DISCOVERY[path]) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(DISCOVERY[path]));
      return;
    }
    if (req.method === "GET" && m && !m[3]) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(podJson(m[1], m[2])));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "not served by the stub", reason: "NotFound", code: 404 }));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    process.stderr.write(`${req.method} ${req.url} (upgrade: ${req.headers.upgrade}${req.headers["sec-websocket-protocol"] ? `, protocols: ${req.headers["sec-websocket-protocol"]}` : ""})\n`);
    socket.on("error", () => {});
    if (!POD.exec(req.url ?? "")?.[3]) return void socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    proxyUpgrade(req, socket, head, targetFile, ca);
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
  process.on("SIGTERM", () => process.exit(0));
}

if (process.argv[1]?.endsWith("kube-api-stub.js")) main();
