// Benchmark: load throughput (MB/s) of a 200 MB image (`docker save` form, 4 layers of
// incompressible files) through POST /images/load, into engined and, when `dockerd` is
// installed, into Docker's daemon in the same run (its own roots, socket and pid file, in its
// own network namespace with no bridge). Each run loads into a fresh data root.
//
//   node_modules/node/bin/node bench/image-load.mjs [--runs N] [--mb SIZE]
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { have } from "./have.mjs";
import tarStream from "tar-stream";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" }, mb: { type: "string", default: "200" } } });
const RUNS = Math.min(Number(values.runs), 10);
const MB = Math.min(Number(values.mb), 1024);
const ROOT = new URL("..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "bench-load-"));

async function tarOf(entries) {
  const pack = tarStream.pack();
  const chunks = [];
  const done = (async () => { for await (const c of pack) chunks.push(c); })();
  for (const e of entries) await new Promise((res, rej) => pack.entry({ name: e.name, size: e.data.length, mtime: new Date(0) }, e.data, (err) => (err ? rej(err) : res())));
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}
const sha = (b) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

async function makeArchive() {
  const layers = [];
  const perLayer = Math.ceil(MB / 4);
  for (let l = 0; l < 4; l++) {
    layers.push(await tarOf(Array.from({ length: perLayer }, (_, i) => ({ name: `layer${l}/file${i}`, data: randomBytes(1024 * 1024) }))));
  }
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", created: "2026-01-01T00:00:00Z", config: {}, rootfs: { type: "layers", diff_ids: layers.map(sha) } }));
  const entries = [{ name: `${sha(config).slice(7)}.json`, data: config }];
  for (const layer of layers) entries.push({ name: `${sha(layer).slice(7)}/layer.tar`, data: layer });
  entries.push({ name: "manifest.json", data: Buffer.from(JSON.stringify([{ Config: entries[0].name, RepoTags: ["bench:load"], Layers: layers.map((l) => `${sha(l).slice(7)}/layer.tar`) }])) });
  const file = join(work, "image.tar");
  writeFileSync(file, await tarOf(entries));
  return file;
}

function load(socketPath, file) {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "POST", path: "/v1.41/images/load?quiet=1", headers: { "content-type": "application/x-tar" } }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => (res.statusCode === 200 && body.includes("Loaded image") ? resolve() : reject(new Error(`${res.statusCode} ${body}`))));
    });
    req.on("error", reject);
    createReadStream(file).pipe(req);
  });
}

async function ping(socketPath) {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: "/_ping" }, (res) => { res.resume(); resolve(res.statusCode === 200); });
    req.on("error", () => resolve(false));
    req.end();
  });
}

const daemons = {
  // Both in a network namespace of their own with no bridge: the host's is never touched.
  engined: (dir) => ["unshare", ["--net", join(ROOT, "bin/engined"), "-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`, "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"]],
  dockerd: (dir) => ["unshare", ["--net", "dockerd", "-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`, "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"]],
};

async function measure(name, file) {
  const rates = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(work, `${name}-`));
    const [cmd, args] = daemons[name](dir);
    const proc = spawn(cmd, args, { stdio: "ignore" });
    try {
      const until = Date.now() + 30_000;
      while (!(await ping(`${dir}/d.sock`))) {
        if (Date.now() > until || proc.exitCode !== null) throw new Error(`${name} did not start`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const t0 = process.hrtime.bigint();
      await load(`${dir}/d.sock`, file);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      rates.push(statSync(file).size / 1e6 / secs);
    } finally {
      proc.kill("SIGTERM");
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.once("exit", r)));
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)];
}

try {
  const file = await makeArchive();
  const engined = await measure("engined", file);
  const dockerd = have("dockerd") && have("unshare") ? await measure("dockerd", file) : undefined;
  console.log(`\nload of a ${(statSync(file).size / 1e6).toFixed(0)} MB image (4 layers), median of ${RUNS} runs`);
  console.log(`${"".padEnd(12)} ${"MB/s".padStart(10)}`);
  console.log(`${"engined".padEnd(12)} ${engined.toFixed(1).padStart(10)}`);
  if (dockerd !== undefined) console.log(`${"dockerd".padEnd(12)} ${dockerd.toFixed(1).padStart(10)}   engined/dockerd = ${(engined / dockerd).toFixed(2)}`);
  else console.log("dockerd is not installed: no same-run comparison (install Debian's docker.io with its service kept from starting).");
} finally {
  rmSync(work, { recursive: true, force: true });
}
