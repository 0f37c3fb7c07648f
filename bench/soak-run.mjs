// The soak (issue 27), shared by bench/soak.mjs and the suite's smoke test: a fresh engined in a
// network namespace of its own with its default bridge (bench/daemons.mjs), a registry on
// loopback inside that namespace holding one small image per client (two layers: a base all the
// images share, and one of the client's own), then N clients (bench/soak-client.mjs) for the
// chosen time, each removing what it made; then what the daemon and the host still hold.
// Everything the run starts is ended by its pid, also when it fails or is interrupted (the CLI's
// Ctrl-C stops the loops through bench/timing.mjs, and the clean-up runs as usual).
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { busyboxTar, call, cycle, ready, spawnDaemon, stopDaemon, supervisorPid } from "./daemons.mjs";
import { endPid } from "./processes.mjs";
import { imageOf, makeLayer } from "./pull-image.mjs";
import { freePort, pushImage, registryAgent, registryConfig, startRegistry, waitListening } from "./pull-registry.mjs";
import { soakClient } from "./soak-client.mjs";
import { hostLeftovers, hostSnapshot, processFigures } from "./soak-host.mjs";
import { soakStats } from "./soak-stats.mjs";
import { going, now } from "./timing.mjs";

/** How long the clients' clean-up and the sweep after it may take, past the run's time. */
const CLEANUP_LIMIT_MS = 300_000;
const DEFAULT_NETWORKS = ["bridge", "host", "none"];

/**
 * Pushes one image per client (`soak/c<i>:latest`) to a registry on the host's 127.0.0.1 (the
 * push registry, ended once the images are in); its storage is served afterwards, read-only,
 * from inside the daemon's namespace (the host's loopback is not reachable from there).
 */
async function pushImages(work, clients) {
  const storage = join(work, "registry");
  const port = await freePort();
  const log = join(work, "push-registry.log");
  const registry = startRegistry(registryConfig(join(work, "push-registry.yml"), storage, port, false), log);
  try {
    await waitListening(registry, registry.pid, port, log);
    const base = await makeLayer(join(work, "base.tar.gz"), 0, 1);
    for (let i = 0; i < clients; i++) {
      const own = await makeLayer(join(work, `c${i}.tar.gz`), i + 1, 1);
      await pushImage(port, imageOf([base, own]), `soak/c${i}`, "latest");
    }
  } finally {
    await endPid(registry.pid, 3000);
    registryAgent.destroy();
  }
  return { storage, port };
}

/** The registry over `storage`, read-only, on 127.0.0.1:`port` of the daemon's network namespace. */
async function registryInDaemonNs(work, daemon, storage, port) {
  const pid = daemon.proc.pid;
  const netns = `/proc/${pid}/ns/net`;
  execFileSync("nsenter", [`--net=${netns}`, "ip", "link", "set", "lo", "up"], { stdio: "ignore", timeout: 10_000 });
  const log = join(work, "registry.log");
  const registry = startRegistry(registryConfig(join(work, "registry.yml"), storage, port, true), log, netns);
  await waitListening(registry, pid, port, log);
  return registry;
}

/** What the API still lists of the run's (and anything else beyond the daemon's defaults and busybox), removed so the daemon stops clean. */
async function sweep(sock, label) {
  const get = async (path) => JSON.parse((await call(sock, "GET", `/v1.41${path}`, { timeoutMs: 30_000 })).text);
  const left = { containers: [], images: [], volumes: [], networks: [] };
  for (const c of await get("/containers/json?all=1")) {
    left.containers.push(`${c.Names?.[0] ?? c.Id} ${c.State}${c.Labels?.soak === label ? "" : " (not the run's)"}`);
    await call(sock, "DELETE", `/v1.41/containers/${c.Id}?force=1`, { timeoutMs: 60_000 }).catch(() => {});
  }
  for (const i of await get("/images/json")) {
    const tags = i.RepoTags ?? [];
    if (tags.includes("busybox:latest")) continue;
    left.images.push(`${i.Id.slice(7, 19)} ${tags.join(",")}`);
    await call(sock, "DELETE", `/v1.41/images/${i.Id}?force=1`, { timeoutMs: 60_000 }).catch(() => {});
  }
  for (const v of (await get("/volumes")).Volumes ?? []) {
    left.volumes.push(v.Name);
    await call(sock, "DELETE", `/v1.41/volumes/${v.Name}?force=1`, { timeoutMs: 60_000 }).catch(() => {});
  }
  for (const n of await get("/networks")) {
    if (DEFAULT_NETWORKS.includes(n.Name)) continue;
    left.networks.push(n.Name);
    await call(sock, "DELETE", `/v1.41/networks/${n.Id}`, { timeoutMs: 60_000 }).catch(() => {});
  }
  return left;
}

/**
 * Runs the soak: `clients` clients for `seconds`, calls seeded by `seed`; `log(line)` hears
 * progress. Resolves with `{ seconds, clients, seed, calls (per call: name, count, p50, p99, max,
 * errors), errors, errorSamples, figures ({ engined, supervisor } x { start, end }: rssMiB,
 * fds, kinds), timeline (a point a minute: at, calls, errors, engined, supervisor), leftovers
 * ({ api, host }) }`; rejects when the daemon or the registry cannot be started,
 * or the daemon exits. `keepLogs`: a folder the daemon's and the supervisor's logs are copied to at the end.
 */
export async function runSoak({ seconds = 600, clients = 16, seed = 27, log = () => {}, keepLogs } = {}) {
  const work = mkdtempSync(join(tmpdir(), "bench-soak-"));
  const label = `soak-${seed}-${process.pid}`;
  let daemon;
  let registry;
  try {
    log(`pushing ${clients} images to a registry on 127.0.0.1`);
    const { storage, port } = await pushImages(work, clients);
    daemon = spawnDaemon("engined", work, { bridge: true });
    await ready(daemon, await busyboxTar());
    registry = await registryInDaemonNs(work, daemon, storage, port);
    await cycle(daemon.sock); // the supervisor starts with the first container
    const supervisor = supervisorPid(daemon);
    const figures = { engined: { start: processFigures(daemon.proc.pid, daemon.dir) }, supervisor: { start: processFigures(supervisor, daemon.dir) } };
    const before = hostSnapshot(daemon);

    const stats = soakStats();
    const made = new Set();
    const all = Array.from({ length: clients }, (_, index) => soakClient({ index, sock: daemon.sock, stats, seed, image: { registry: `127.0.0.1:${port}`, repo: `soak/c${index}` }, label, made }));
    const alive = () => daemon.proc.exitCode === null && daemon.proc.signalCode === null;
    log(`${clients} clients for ${seconds} s (seed ${seed})`);
    const t0 = now();
    // every minute: how far, and the two processes' memory and descriptors (a leak shows as a trend)
    const timeline = [];
    const progress = setInterval(() => {
      const point = { at: (now() - t0) / 1000, calls: stats.table().reduce((n, c) => n + c.count, 0), errors: stats.errorCount(), engined: processFigures(daemon.proc.pid, daemon.dir), supervisor: processFigures(supervisor, daemon.dir) };
      timeline.push(point);
      const f = (x) => (x ? `${x.rssMiB.toFixed(0)} MiB, ${x.fds} fds` : "gone");
      log(`${Math.round(point.at)} s: ${point.calls} calls, ${point.errors} errors; engined ${f(point.engined)}; supervisor ${f(point.supervisor)}`);
    }, 60_000);
    try {
      // at most 50 calls a second per client: a bound, far above what a call's latency allows
      await Promise.all(all.map((c) => c.run(() => alive() && going(t0, seconds * 1000), seconds * 50)));
    } finally {
      clearInterval(progress);
    }
    const ranFor = (now() - t0) / 1000;
    log(`clean-up: each client removes what it made`);
    const cleanupEnd = now() + CLEANUP_LIMIT_MS;
    const cleanedUp = await Promise.race([Promise.all(all.map((c) => c.cleanup())).then(() => true), new Promise((r) => setTimeout(() => r(false), CLEANUP_LIMIT_MS).unref())]);
    if (!cleanedUp) log(`the clients' clean-up did not end in ${CLEANUP_LIMIT_MS / 1000} s: what they left is swept below`);
    if (!alive()) {
      const tail = readFileSync(join(daemon.dir, "daemon.log"), "utf8").trim().split("\n").slice(-20).join("\n");
      throw new Error(`engined exited (${daemon.proc.exitCode ?? daemon.proc.signalCode}) during the run; its last lines:\n${tail}`);
    }
    const api = await sweep(daemon.sock, label);
    const host = await hostLeftovers(daemon, before, [...made], Math.max(5_000, Math.min(15_000, cleanupEnd - now())));
    // once what was removed has settled
    figures.engined.end = processFigures(daemon.proc.pid, daemon.dir);
    figures.supervisor.end = processFigures(supervisor, daemon.dir);
    return { seconds: ranFor, clients, seed, calls: stats.table(), errors: stats.errorCount(), errorSamples: stats.errors(), figures, timeline, leftovers: { api, host } };
  } finally {
    if (daemon && keepLogs) {
      mkdirSync(keepLogs, { recursive: true });
      for (const file of ["daemon.log", "exec/supervisor/supervisor.log"]) {
        try {
          copyFileSync(join(daemon.dir, file), join(keepLogs, basename(file)));
        } catch {
          // not made (the supervisor never started)
        }
      }
    }
    if (daemon) await stopDaemon(daemon);
    if (registry) await endPid(registry.pid, 3000);
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every leftover of a result, one line each ("kind: what"); empty when nothing was left. */
export function leftoverLines(result) {
  const lines = [];
  for (const [where, groups] of Object.entries(result.leftovers)) for (const [kind, list] of Object.entries(groups)) for (const x of list) lines.push(`${where} ${kind}: ${x}`);
  return lines;
}
