// Benchmark: what routing TLS clients by their ClientHello (host/listeners/tls-server.ts) costs
// a new connection, next to one https.Server with the same modern options. Each round starts a
// server process of each kind in turn and opens N new connections to it, one after the other
// (TLS 1.3, a client certificate, no session reuse), each a GET; printed are the server's CPU
// time and the wall time per connection, medians over the rounds, and the time of the routing
// function itself on a modern and on a TLS 1.0 ClientHello. Nothing is asserted.
//
//   node_modules/node/bin/node bench/tls.mjs [--connections N] [--rounds R]
import { execFileSync, fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer, get } from "node:https";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { parseArgs } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
const { loadTlsOptions } = await import(join(ROOT, "dist/host/listeners/tls-options.js"));

if (process.argv[2] === "--serve") await serve(process.argv[3], process.argv[4]);
else await main();

async function main() {
  const { values } = parseArgs({ options: { connections: { type: "string", default: "500" }, rounds: { type: "string", default: "6" } } });
  const N = Math.min(Number(values.connections), 5000);
  const ROUNDS = Math.min(Number(values.rounds), 20);
  const dir = mkdtempSync(join(tmpdir(), "engine-bench-tls-"));
  try {
    makeCerts(dir);
    const client = { ca: readFileSync(join(dir, "ca.pem")), cert: readFileSync(join(dir, "client.pem")), key: readFileSync(join(dir, "client-key.pem")) };
    const results = { https: [], routed: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of ["https", "routed"]) results[kind].push(await measure(kind, dir, client, N));
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    for (const kind of ["https", "routed"]) {
      const cpu = median(results[kind].map((r) => r.cpuMs));
      const wall = median(results[kind].map((r) => r.wallMs));
      console.log(`${kind.padEnd(7)} server CPU ${cpu.toFixed(3)} ms/connection, wall ${wall.toFixed(3)} ms/connection (median of ${ROUNDS} rounds of ${N})`);
    }
    await routingCost();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(kind, dir, client, n) {
  const child = fork(new URL(import.meta.url).pathname, ["--serve", kind, dir], { stdio: "inherit" });
  try {
    const port = await next(child);
    const once = () => new Promise((resolve, reject) => {
      const req = get({ host: "127.0.0.1", port, path: "/", agent: false, servername: "localhost", ...client }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
    });
    for (let i = 0; i < 30; i++) await once();
    child.send("start");
    await next(child);
    const t = performance.now();
    for (let i = 0; i < n; i++) await once();
    const wall = performance.now() - t;
    child.send("stop");
    const cpu = await next(child);
    return { cpuMs: cpu / n, wallMs: wall / n };
  } finally {
    child.kill();
  }
}

function next(child) {
  return new Promise((resolve) => child.once("message", resolve));
}

/** The child: an https.Server with the modern options, or the routed listener the daemon uses. */
async function serve(kind, dir) {
  const { createTlsFront } = await import(join(ROOT, "dist/host/listeners/tls-server.js"));
  const tls = loadTlsOptions({ verify: true, cacert: join(dir, "ca.pem"), cert: join(dir, "server.pem"), key: join(dir, "server-key.pem") });
  const handler = (_req, res) => res.end("OK");
  const silent = { warn() {} };
  const server = kind === "https"
    ? createHttpsServer({ ...tls.modern, requestCert: true, rejectUnauthorized: true }, handler)
    : createTlsFront(createHttpServer(handler), tls, silent);
  let from;
  process.on("message", (m) => {
    if (m === "start") {
      from = process.cpuUsage();
      process.send("started");
    } else {
      const used = process.cpuUsage(from);
      process.send((used.user + used.system) / 1000);
    }
  });
  server.listen(0, "127.0.0.1", () => process.send(server.address().port));
}

/** routeClientHello on the first bytes real Node clients send. */
async function routingCost() {
  const { routeClientHello } = await import(join(ROOT, "dist/host/listeners/client-hello.js"));
  const hello = async (options) => {
    const server = createNetServer();
    const first = new Promise((resolve) => server.once("connection", (s) => s.once("data", (d) => { resolve(d); s.destroy(); })));
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const c = connect({ host: "127.0.0.1", port: server.address().port, rejectUnauthorized: false, ...options });
    c.on("error", () => {});
    const bytes = await first;
    c.destroy();
    server.close();
    return bytes;
  };
  for (const [name, options] of [["TLS 1.3", {}], ["TLS 1.0", { minVersion: "TLSv1", maxVersion: "TLSv1", ciphers: "DEFAULT:@SECLEVEL=0" }]]) {
    const bytes = await hello(options);
    const n = 1_000_000;
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) routeClientHello(bytes);
    const ns = Number(process.hrtime.bigint() - t) / n;
    console.log(`routeClientHello, ${name} ClientHello of ${bytes.length} bytes -> ${routeClientHello(bytes)}: ${ns.toFixed(0)} ns`);
  }
}

function makeCerts(dir) {
  const openssl = (args) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=ca", "-keyout", "ca-key.pem", "-out", "ca.pem"]);
  for (const [name, ext] of [["server", "subjectAltName=DNS:localhost\n"], ["client", "extendedKeyUsage=clientAuth\n"]]) {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${name}`, "-keyout", `${name}-key.pem`, "-out", `${name}.csr`]);
    openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial", "-days", "1",
      "-extfile", `${name}.ext`, "-out", `${name}.pem`]);
  }
}
