// Benchmark: what an authorization plugin costs a request. engined and, where it is installed,
// Docker's daemon, each started fresh (own roots, own network namespace, no bridge) three ways:
// without a plugin, with the example policy server (host/authz-remote/examples/policy/server.mjs)
// on a unix socket where each daemon looks for plugins by name, and (engined only) with the
// same policy in-process. One keep-alive client sends GET /_ping and POST /containers/create
// (a JSON body the policy reads; the image does not exist, so nothing is created); the median
// latency and the rate are printed side by side. Nothing is asserted.
//
//   node_modules/node/bin/node bench/authz.mjs [--requests N]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { call, daemons } from "./daemons.mjs";
import { have } from "./have.mjs";
import { endPid, sleep } from "./processes.mjs";
import { sideBySide } from "./table.mjs";
import { going, median, now, stopLoopsOnCtrlC, wasInterrupted } from "./timing.mjs";

const { values } = parseArgs({ options: { requests: { type: "string", default: "2000" } } });
const REQUESTS = Math.max(10, Math.min(Number(values.requests), 20_000));
const LIMIT_MS = 120_000;
const ROOT = new URL("..", import.meta.url).pathname;
const NAME = `bench${randomBytes(3).toString("hex")}`;
const SOCKET_DIRS = { engined: "/run/engine/plugins", dockerd: "/run/docker/plugins" };

stopLoopsOnCtrlC();

/** The example policy server on `<dir>/<NAME>.sock`, ready when it says it listens. */
async function startPolicy(dir) {
  mkdirSync(dir, { recursive: true });
  const proc = spawn(process.execPath, [join(ROOT, "host/authz-remote/examples/policy/server.mjs"), "--socket", join(dir, `${NAME}.sock`)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  proc.stdout.on("data", (d) => {
    // Its one line per verdict is dropped after the first: the bench reads only "listening".
    if (!out.includes("listening")) out += d.toString();
  });
  const until = Date.now() + 10_000;
  while (!out.includes("listening")) {
    if (proc.exitCode !== null || Date.now() > until) throw new Error(`the policy server did not start: ${out}`);
    await sleep(20);
  }
  return proc;
}

async function measure(name, plugin) {
  const work = mkdtempSync(join(tmpdir(), `bench-authz-${name}-`));
  let policy;
  let daemon;
  try {
    const extra = [];
    if (plugin === "server") {
      policy = await startPolicy(SOCKET_DIRS[name]);
      extra.push("--authorization-plugin", NAME);
    } else if (plugin === "in-process") {
      extra.push("--authorization-plugin", join(ROOT, "host/authz-remote/examples/policy/in-process.mjs"));
    }
    const [cmd, args] = daemons[name].start(work, false);
    daemon = spawn(cmd, [...args, ...extra], { stdio: "ignore" });
    const sock = `${work}/d.sock`;
    const until = Date.now() + 30_000;
    for (;;) {
      if (daemon.exitCode !== null) throw new Error(`${name} exited (${daemon.exitCode})`);
      const up = await call(sock, "GET", "/_ping", { timeoutMs: 2000 }).catch(() => undefined);
      if (up?.status === 200) break;
      if (Date.now() > until) throw new Error(`${name} not ready in time`);
      await sleep(20);
    }
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const out = {};
    const requests = {
      ping: () => call(sock, "GET", "/_ping", { agent }),
      create: () => call(sock, "POST", "/v1.41/containers/create", { agent, body: { Image: "no-such-image-bench", HostConfig: { Binds: ["/tmp:/host"] } } }),
    };
    for (const [key, send] of Object.entries(requests)) {
      for (let i = 0; i < 20; i++) await send(); // warm-up: connections, JIT, the plugin's activation
      const times = [];
      const t0 = now();
      while (times.length < REQUESTS && going(t0, LIMIT_MS)) {
        const s = now();
        await send();
        times.push(now() - s);
      }
      out[key] = { p50: median(times), rate: (times.length / (now() - t0)) * 1000 };
    }
    agent.destroy();
    return out;
  } catch (err) {
    return { failed: err.message };
  } finally {
    if (daemon?.pid && daemon.exitCode === null) await endPid(daemon.pid, 15_000);
    if (policy?.pid) await endPid(policy.pid, 5_000);
    rmSync(join(SOCKET_DIRS[name], `${NAME}.sock`), { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

const dockerd = have("dockerd") && have("unshare");
const settings = [
  ["no plugin", "none"],
  ["policy server on a socket", "server"],
  ["policy in-process (engined only)", "in-process"],
];
const results = {};
for (const [label, plugin] of settings) {
  if (wasInterrupted()) break;
  results[label] = { engined: await measure("engined", plugin) };
  if (dockerd && plugin !== "in-process") results[label].dockerd = await measure("dockerd", plugin);
}

console.log(`\n${REQUESTS} requests each, one client, keep-alive, unix socket; median latency and rate`);
for (const [label, r] of Object.entries(results)) {
  const table = sideBySide(r, 36);
  console.log("");
  table.header(label);
  table.row("GET /_ping p50", (x) => x.ping, (p) => p.p50, "ms");
  table.row("GET /_ping rate", (x) => x.ping, (p) => p.rate, "rate");
  table.row("POST /containers/create (404) p50", (x) => x.create, (p) => p.p50, "ms");
  table.row("POST /containers/create (404) rate", (x) => x.create, (p) => p.rate, "rate");
  table.printNotes();
}
const cost = (name, key) => {
  const base = results["no plugin"]?.[name]?.[key]?.p50;
  const withPlugin = results["policy server on a socket"]?.[name]?.[key]?.p50;
  return base && withPlugin ? `${(withPlugin - base).toFixed(3)} ms` : "n/a";
};
console.log(`\nwhat the policy server adds to a request's median: engined ${cost("engined", "ping")} (/_ping), ${cost("engined", "create")} (create)` +
  (dockerd ? `; dockerd ${cost("dockerd", "ping")} (/_ping), ${cost("dockerd", "create")} (create)` : ""));
