// Benchmark: how engined grows with the containers and images it holds, next to Docker's daemon
// with the same (issue 30: "nothing in engined may be quadratic in the number of containers,
// images or layers"). Each daemon is started fresh as the other container benches start it
// (bench/daemons.mjs: its own folder, roots and network namespace, no bridge, `busybox`
// imported from the host's static busybox). Numbers are printed; nothing is asserted.
//
//   1. Containers, in steps (0, max/4, max/2, max created; `--running` of max running, in
//      proportion at each step): `busybox sleep` with NetworkMode none, created over the API by 4
//      clients (untimed), some started. At each step: the daemon's, its supervisor's and the
//      monitors' RSS, `GET /containers/json?all=1` and `GET /containers/json` (medians), inspect
//      by id and by name (medians), then the next `--batch` creates one after the other (p50, p99;
//      they stay and count towards the next step).
//   2. Images, with the containers of the last step still there: single-layer images imported
//      (`POST /images/create?fromSrc=-`, a tiny tar each, tagged scale/img:<i>) in steps (0,
//      images/4, images/2, images); at each, `GET /images/json` and an image inspect (medians).
//   Beside each time, the daemon's CPU ms a request (its threads' schedstat over the loop): on a
//   shared machine the wall times carry the neighbours' load, the CPU much less.
//   Per daemon: each figure at each step, its growth per 1,000 containers (per 100 images), its
//   bend (the second half's growth over the first's: 1 straight, 3 quadratic) and the goal;
//   then engined against dockerd.
//
//   node_modules/node/bin/node bench/scale.mjs [--max N] [--running N] [--images N] [--batch N]
//                                              [--requests N] [--only engined|dockerd] [--profile DIR]
//
// --profile DIR: engined runs with --cpu-prof into DIR (its whole life).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { parseArgs } from "node:util";
import { measureBoth, supervisorPid } from "./daemons.mjs";
import { sleep } from "./processes.mjs";
import { containerFill, containerStep, fillImages, imageStep, memoryNow, percentile } from "./scale-steps.mjs";
import { printScale } from "./scale-report.mjs";
import { now, stopLoopsOnCtrlC, wasInterrupted } from "./timing.mjs";

const { values } = parseArgs({
  options: {
    max: { type: "string", default: "1000" },
    running: { type: "string", default: "100" },
    images: { type: "string", default: "200" },
    batch: { type: "string", default: "50" },
    requests: { type: "string", default: "20" },
    only: { type: "string" },
    profile: { type: "string" },
  },
});
if (values.only && !["engined", "dockerd"].includes(values.only)) throw new Error(`--only takes engined or dockerd, not ${values.only}`);
const MAX = Math.max(4, Math.min(Number(values.max) || 1000, 5000));
const RUNNING = Math.max(0, Math.min(Number(values.running) || 0, 500, MAX));
const IMAGES = Math.max(0, Math.min(Number(values.images) || 0, 2000));
const BATCH = Math.max(2, Math.min(Number(values.batch) || 50, 500));
const REQUESTS = Math.max(3, Math.min(Number(values.requests) || 20, 500));
const STEPS = [0, Math.round(MAX / 4), Math.round(MAX / 2), MAX];
const IMAGE_STEPS = IMAGES ? [0, Math.round(IMAGES / 4), Math.round(IMAGES / 2), IMAGES] : [];
const FILL_LIMIT_MS = 1_200_000; // to reach one step: creates and starts
const MEASURE_LIMIT_MS = 120_000; // each timed loop of a step
const PROFILE = values.profile ? resolvePath(values.profile) : undefined;
if (PROFILE) mkdirSync(PROFILE, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "bench-scale-"));
stopLoopsOnCtrlC();

const log = (name, text) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${name}: ${text}`);

/** Steps of containers, then of images; what was measured before a failure is kept (`ok`), with the reason (`na`). */
async function measure(daemon, part, out) {
  const fill = containerFill(daemon);
  const sup = () => (daemon.supervisorPid ??= supervisorPid(daemon));
  const steps = { ok: [] };
  out.steps = steps;
  try {
    for (const count of STEPS) {
      if (wasInterrupted()) throw new Error("interrupted");
      const t0 = now();
      const running = Math.round((count * RUNNING) / MAX);
      await fill.fill(count, running, FILL_LIMIT_MS);
      log(daemon.name, `${count} created, ${running} running (${Math.round((now() - t0) / 1000)} s)`);
      await sleep(2000); // the creates' garbage collected, or not: the same wait on both sides
      const step = { count, running, ...memoryNow(daemon, sup()) };
      Object.assign(step, await containerStep(daemon, fill, { requests: REQUESTS, limitMs: MEASURE_LIMIT_MS }));
      const creates = await fill.timedCreates(BATCH, MEASURE_LIMIT_MS);
      Object.assign(step, { createP50: percentile(creates.times, 50), createP99: percentile(creates.times, 99), createCpu: creates.cpuMs });
      steps.ok.push(step);
    }
  } catch (err) {
    steps.na = err.message;
  } finally {
    fill.close();
  }
  if (!IMAGES) return;
  const images = { ok: [] };
  out.images = images;
  const state = { images: 0 };
  try {
    for (const target of IMAGE_STEPS) {
      if (wasInterrupted()) throw new Error("interrupted");
      await fillImages(daemon, state, target, FILL_LIMIT_MS);
      log(daemon.name, `${target} images imported`);
      images.ok.push({ images: target, ...(await imageStep(daemon, state, { requests: REQUESTS, limitMs: MEASURE_LIMIT_MS })) });
    }
  } catch (err) {
    images.na = err.message;
  }
  log(daemon.name, "removing everything");
}

let results;
try {
  const env = PROFILE ? { engined: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${PROFILE}`.trim() } } : undefined;
  results = await measureBoth(work, values.only, { env }, measure);
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log(`\nscale: steps of ${STEPS.join(", ")} containers created (${RUNNING} of ${MAX} running, in proportion at each step), a batch of ${BATCH} creates timed at each; ${REQUESTS} requests per figure; images: ${IMAGE_STEPS.join(", ")}`);
printScale(results, { max: MAX, running: RUNNING, images: IMAGES });
if (PROFILE) console.log(`(engined's CPU profiles: ${PROFILE})`);
if (wasInterrupted()) process.exitCode = 130;
