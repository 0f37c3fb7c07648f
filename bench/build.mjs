// Benchmark: building an image with the classic builder (`POST /build`, no `version=2`), in
// engined and, when `dockerd` is installed, in Docker's daemon in the same run, each started
// fresh in its own folder and network namespace with no bridge (bench/daemons.mjs), `busybox`
// imported. The build: a multi-stage Dockerfile of twelve steps (RUN steps that write files, a
// COPY of 3000 files of 1-4 KiB in nested folders, ENV, WORKDIR, COPY --from the first stage,
// CMD) with its context as one tar (bench/build-context.mjs).
//
// Each run starts both daemons fresh (engined's run, then Docker's, and again: a neighbour's
// load on the machine falls on both alike). In each: a warm-up build of the same Dockerfile over
// a context of 30 files, then every image but busybox removed, so the cache has nothing; the
// first build (no step from the cache: checked), a run of the image (its command checks the md5
// of the copied files), an unchanged rebuild (every step from the cache: checked, and the same
// image ID). Times from the request to the end of the stream; a build whose stream has an
// error, or that did not end in "Successfully tagged", or whose image is missing, makes that
// daemon's row n/a, never a fast figure.
//
//   node_modules/node/bin/node bench/build.mjs [--runs N] [--files N] [--only engined|dockerd]
//                                              [--detail] [--profile DIR]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { parseArgs } from "node:util";
import { CACHEABLE_STEPS, STEPS, packContext, writeContext } from "./build-context.mjs";
import { call, expect, measureBoth } from "./daemons.mjs";
import { cpuMeter, sampleRss } from "./resource-usage.mjs";
import { sideBySide } from "./table.mjs";
import { going, median, now, stopLoopsOnCtrlC, wasInterrupted } from "./timing.mjs";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    files: { type: "string", default: "3000" },
    only: { type: "string" },
    detail: { type: "boolean", default: false },
    profile: { type: "string" },
  },
});
if (values.only && !["engined", "dockerd"].includes(values.only)) throw new Error(`--only takes engined or dockerd, not ${values.only}`);
const RUNS = Math.max(1, Math.min(Number(values.runs) || 5, 50));
const FILES = Math.max(1, Math.min(Number(values.files) || 3000, 50_000));
const BUILD_LIMIT_MS = 300_000; // a build that sends nothing for this long is abandoned
const ALL_LIMIT_MS = 1_800_000; // all the rounds: no new round starts after this
const TAG = "bench/build:latest";
// --profile DIR: engined runs with --cpu-prof into DIR (its whole life: start, builds, stop)
const PROFILE = values.profile ? resolvePath(values.profile) : undefined;
if (PROFILE) mkdirSync(PROFILE, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "bench-build-"));
stopLoopsOnCtrlC();

// ---------------------------------------------------------------------------------------------
// One build

/**
 * `POST /build` with the context; resolves with `{ ms, id, text, steps }` once the stream has
 * ended, every line is JSON without `error`, and the last says "Successfully tagged". `steps`:
 * when (ms from the request) each `Step k/N` line came; `text`: the stream's text, line by line.
 */
function build(sock, context) {
  const query = new URLSearchParams({ t: TAG, rm: "1", networkmode: "none" });
  return new Promise((resolve, reject) => {
    const t0 = now();
    const req = request({ socketPath: sock, method: "POST", path: `/v1.41/build?${query}`, agent: false, headers: { "content-type": "application/x-tar", "content-length": context.length } }, (res) => {
      let rest = "";
      const lines = [];
      const steps = [];
      res.setEncoding("utf8");
      res.on("data", (d) => {
        const at = now() - t0;
        const parts = (rest + d).split("\n");
        rest = parts.pop();
        for (const p of parts.filter((x) => x.trim())) {
          lines.push(p);
          if (/^Step \d+\//.test(streamOf(p))) steps.push(at);
        }
      });
      res.on("error", reject);
      res.on("end", () => {
        const ms = now() - t0;
        if (rest.trim()) lines.push(rest);
        if (res.statusCode !== 200) return reject(new Error(`POST /build answered ${res.statusCode}: ${lines.join(" ").slice(0, 200)}`));
        let id;
        const streamText = [];
        for (const line of lines) {
          let o;
          try {
            o = JSON.parse(line);
          } catch {
            return reject(new Error(`a line of the build's stream is not JSON: ${line.slice(0, 160)}`));
          }
          if (o.error || o.errorDetail) return reject(new Error(`the build failed: ${(o.error ?? o.errorDetail?.message ?? "").trim().slice(0, 200)}`));
          if (o.aux?.ID) id = o.aux.ID;
          if (o.stream) streamText.push(o.stream);
        }
        const text = streamText.join("").trim().split("\n");
        if (text[text.length - 1] !== `Successfully tagged ${TAG}`) return reject(new Error(`the build's stream ended with ${JSON.stringify(text[text.length - 1] ?? "").slice(0, 160)}`));
        if (steps.length !== STEPS) return reject(new Error(`the build's stream has ${steps.length} steps, not ${STEPS}`));
        resolve({ ms, id, text, steps });
      });
    });
    req.on("error", reject);
    req.setTimeout(BUILD_LIMIT_MS, () => req.destroy(new Error(`the build sent nothing for ${BUILD_LIMIT_MS / 1000} s`)));
    req.end(context);
  });
}

const streamOf = (line) => {
  try {
    return JSON.parse(line).stream ?? "";
  } catch {
    return "";
  }
};

/** A build timed with the daemon's peak RSS and CPU seconds; checks the tagged image is the one built. */
async function measuredBuild(daemon, context) {
  execFileSync("sync", [], { timeout: 120_000 }); // nothing the run before wrote is flushed during this one
  const peak = sampleRss(daemon.proc.pid);
  const cpu = cpuMeter(daemon.proc.pid);
  let built;
  let rss;
  try {
    built = await build(daemon.sock, context);
  } finally {
    rss = peak();
  }
  const used = cpu();
  const image = await expect(200, daemon.sock, "GET", `/images/${TAG}/json`);
  if (built.id && image.Id !== built.id) throw new Error(`${TAG} is ${image.Id}, the build said ${built.id}`);
  return { ...built, id: image.Id, rss, cpu: used.total, cpuParts: used.parts };
}

const usedCache = (text) => text.filter((l) => l.trim() === "---> Using cache").length;

/** The built image's command exits 0: the md5 of the files it holds is the context's. */
async function runImage(sock, md5) {
  const { Id } = await expect(201, sock, "POST", "/containers/create", { body: { Image: TAG, Env: [`EXPECTED=${md5}`], HostConfig: { NetworkMode: "none" } } });
  try {
    await expect(204, sock, "POST", `/containers/${Id}/start`);
    const { StatusCode } = await expect(200, sock, "POST", `/containers/${Id}/wait`);
    if (StatusCode !== 0) throw new Error(`the built image's check exited ${StatusCode}: the files it holds are not the context's`);
  } finally {
    await call(sock, "DELETE", `/v1.41/containers/${Id}?force=1`, { timeoutMs: 30_000 }).catch(() => {});
  }
}

/** Removes every image but busybox: leaves first (no other image's parent), their untagged parents go with them. */
async function removeBuilt(sock, busyboxId) {
  for (let round = 0; round < 30; round++) {
    const all = (await expect(200, sock, "GET", "/images/json?all=1")).filter((i) => i.Id !== busyboxId);
    if (all.length === 0) return;
    const parents = new Set(all.map((i) => i.ParentId));
    for (const leaf of all.filter((i) => !parents.has(i.Id))) await call(sock, "DELETE", `/v1.41/images/${leaf.Id}?force=1`, { timeoutMs: 60_000 });
  }
  throw new Error("the images of the last build could not all be removed");
}

// ---------------------------------------------------------------------------------------------
// A round: one run in each daemon, started fresh

/**
 * In a daemon just started: a warm-up build of the same Dockerfile over a small context (the
 * daemon's code paths run once), all its images removed; then the first build, a run of the
 * image, the rebuild, and the images removed again. `out.run` is `{ first, again }`.
 */
async function oneRun(daemon, part, context, warmUp, md5) {
  const { sock } = daemon;
  const busyboxId = (await expect(200, sock, "GET", "/images/busybox:latest/json")).Id;
  await part("run", async () => {
    await build(sock, warmUp);
    await removeBuilt(sock, busyboxId);
    const first = await measuredBuild(daemon, context);
    if (usedCache(first.text) !== 0) throw new Error(`the first build took ${usedCache(first.text)} steps from the cache`);
    await runImage(sock, md5);
    const again = await measuredBuild(daemon, context);
    if (usedCache(again.text) !== CACHEABLE_STEPS) throw new Error(`the rebuild took ${usedCache(again.text)} of ${CACHEABLE_STEPS} steps from the cache`);
    if (again.id !== first.id) throw new Error(`the rebuild made ${again.id}, not ${first.id}`);
    await removeBuilt(sock, busyboxId);
    return { first, again };
  });
}

/** Medians over the runs, and for --detail each step's median time. */
function summary(runs) {
  const of = (kind, key) => median(runs.map((r) => r[kind][key]));
  // a step's time: from its "Step k/N" line to the next one (the last: to the end of the stream)
  const stepTimes = (kind) => Array.from({ length: STEPS + 1 }, (_, k) => median(runs.map(({ [kind]: b }) => (k === 0 ? b.steps[0] : (b.steps[k] ?? b.ms) - b.steps[k - 1]))));
  const middle = (kind) => [...runs].sort((a, b) => a[kind].ms - b[kind].ms)[Math.floor((runs.length - 1) / 2)][kind];
  const side = (kind) => ({ ms: of(kind, "ms"), rss: of(kind, "rss"), cpu: of(kind, "cpu"), each: runs.map((r) => r[kind].ms), steps: stepTimes(kind), cpuParts: middle(kind).cpuParts });
  return { n: runs.length, first: { ...side("first"), text: runs[0].first.text }, again: side("again") };
}

/**
 * --runs rounds, each with fresh daemons (engined's run, then Docker's): a neighbour's load on
 * the machine falls on both alike. A daemon whose run fails gives no figure (its reason instead),
 * and runs no more rounds.
 */
async function measureRounds(context, warmUp, md5) {
  const names = ["engined", "dockerd"].filter((n) => !values.only || values.only === n);
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  const failed = {};
  const leftovers = {};
  const env = PROFILE ? { engined: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${PROFILE}`.trim() } } : undefined;
  const t0 = now();
  for (let round = 0; round < RUNS && going(t0, ALL_LIMIT_MS); round++) {
    const left = names.filter((n) => !failed[n]);
    if (left.length === 0) break;
    const r = await measureBoth(work, left.length === 1 ? left[0] : undefined, { env }, (daemon, part) => oneRun(daemon, part, context, warmUp, md5));
    for (const n of left) {
      const x = r[n] ?? {};
      if (x.leftovers) leftovers[n] = (leftovers[n] ?? 0) + x.leftovers;
      const why = x.failed ?? x.run?.na;
      if (why !== undefined) failed[n] = why;
      else runs[n].push(x.run);
    }
  }
  return Object.fromEntries(names.map((n) => {
    const interruptedAfterSome = wasInterrupted() && runs[n].length > 0;
    if (failed[n] && !interruptedAfterSome) return [n, { failed: failed[n] }];
    if (runs[n].length === 0) return [n, { failed: "no run in the time limit" }];
    return [n, { runs: summary(runs[n]), ...(leftovers[n] ? { leftovers: leftovers[n] } : {}) }];
  }));
}

// ---------------------------------------------------------------------------------------------
// Run and print

let results;
let ctx;
let contextBytes;
try {
  const folder = join(work, "context");
  ctx = writeContext(folder, FILES);
  const context = await packContext(folder);
  contextBytes = context.length;
  writeContext(join(work, "warm-up"), 30);
  const warmUp = await packContext(join(work, "warm-up"));
  results = await measureRounds(context, warmUp, ctx.md5);
} finally {
  rmSync(work, { recursive: true, force: true });
}

const table = sideBySide(results, 40);
console.log(`\nclassic builder, ${STEPS} steps in 2 stages, a context of ${ctx.files} files (${(ctx.bytes / 2 ** 20).toFixed(1)} MiB; a ${(contextBytes / 2 ** 20).toFixed(1)} MiB tar), median of ${RUNS} runs, fresh daemons each run`);
table.header();
table.row("first build (no cache)", (r) => r.runs, (o) => o.first.ms, "ms");
table.row("unchanged rebuild (all from the cache)", (r) => r.runs, (o) => o.again.ms, "ms");
table.row("peak RSS, first build", (r) => r.runs, (o) => o.first.rss, "mib");
table.row("peak RSS, rebuild", (r) => r.runs, (o) => o.again.rss, "mib");
table.row("CPU s, first build", (r) => r.runs, (o) => o.first.cpu, "s");
table.row("CPU s, rebuild", (r) => r.runs, (o) => o.again.cpu, "s");
for (const [name, r] of Object.entries(results)) {
  if (r.runs?.first) console.log(`(${name}, each run, ms: first ${r.runs.first.each.map((x) => x.toFixed(0)).join(", ")}; rebuild ${r.runs.again.each.map((x) => x.toFixed(0)).join(", ")}${r.runs.n < RUNS ? `; ${r.runs.n} of ${RUNS} runs` : ""})`);
}
console.log("(times: from the request to the end of the stream, the context sent with it; peak RSS: the daemon and its child");
console.log(" processes (Docker's containerd, engined's supervisor), sampled every 100 ms; CPU s: user + system");
console.log(" seconds of the daemon and its children, not of the containers' monitors, which neither daemon parents)");
table.printNotes();

if (values.detail) {
  // each step's median time, from its "Step" line to the next line of the kind
  const steps = (results.engined?.runs?.first ?? results.dockerd?.runs?.first)?.text.filter((l) => /^Step \d+\//.test(l)) ?? [];
  for (const kind of ["first", "again"]) {
    console.log(`\n${kind === "first" ? "first build" : "rebuild"}: median ms of each step, from its "Step" line to the next`);
    const d = sideBySide(results, 60);
    d.header();
    d.row("request to Step 1 (the context sent and read)", (r) => r.runs, (o) => o[kind].steps[0], "ms");
    steps.forEach((s, k) => d.row(s.slice(0, 60), (r) => r.runs, (o) => o[kind].steps[k + 1], "ms"));
  }
  for (const [name, r] of Object.entries(results)) {
    if (!r.runs?.first) continue;
    for (const kind of ["first", "again"]) {
      const rows = [...r.runs[kind].cpuParts].sort((a, b) => b[1][0] + b[1][1] - a[1][0] - a[1][1]).map(([who, [u, s]]) => `${who} ${u.toFixed(2)}/${s.toFixed(2)}`);
      console.log(`${name}, ${kind === "first" ? "first build" : "rebuild"} (the median run), CPU s user/system: ${rows.join(", ")}`);
    }
  }
}
if (PROFILE) console.log(`(engined's CPU profiles: ${PROFILE})`);
if (wasInterrupted()) process.exitCode = 130;
