// The parts of bench/scale.mjs that talk to a daemon: filling it with containers (some of them
// running) and images, and the figures taken at each step (latencies over the API, the RSS of
// the daemon, its supervisor and the containers' monitors). Every loop is bounded by a count and
// a time limit, and ends at Ctrl-C.
import { readdirSync, readFileSync } from "node:fs";
import { Agent } from "node:http";
import tarStream from "tar-stream";
import { call, createBody, daemons, expect } from "./daemons.mjs";
import { rssMiB } from "./resource-usage.mjs";
import { going, median, now, wasInterrupted } from "./timing.mjs";

/** The p-th percentile (nearest rank) of `xs`. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * The CPU time (ms) the process's threads have had so far, from /proc/PID/task/TID/schedstat
 * (nanoseconds): what a request cost the daemon, whatever else the machine's CPUs were doing
 * meanwhile (wall times on a shared machine carry its load; this does not, or much less).
 */
export function cpuMs(pid) {
  let ns = 0;
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // ended meanwhile
    }
  }
  return ns / 1e6;
}

/** The command of every container: long enough to outlive the run, ended by the force removal at the end. */
const SLEEP = ["sleep", "86400"];

/**
 * A daemon's containers as the bench makes them: `created` so far and `running` of them started.
 * The first `running` go on an agent of their own, so that the timed requests below share none.
 */
export function containerFill(daemon) {
  const state = { created: 0, running: 0, ids: [] };
  const agents = Array.from({ length: 4 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  const create = async (agent) => {
    const { Id } = await expect(201, daemon.sock, "POST", "/containers/create", { body: createBody("none", SLEEP), agent });
    state.ids.push(Id);
    state.created++;
    return Id;
  };
  const start = async (id, agent) => {
    await expect(204, daemon.sock, "POST", `/containers/${id}/start`, { agent });
    state.running++;
    const pid = (await expect(200, daemon.sock, "GET", `/containers/${id}/json`, { agent })).State?.Pid;
    if (pid) daemon.started.add(pid);
  };
  return {
    state,
    /**
     * Creates (4 clients at once, untimed) until there are `target` containers, and starts the
     * ones it takes for `runningTarget` to run; throws when `limitMs` is spent before.
     */
    async fill(target, runningTarget, limitMs) {
      const t0 = now();
      let toCreate = target - state.created;
      const client = async (agent) => {
        while (toCreate > 0 && going(t0, limitMs)) {
          toCreate--;
          await create(agent);
        }
      };
      await Promise.all(agents.map(client));
      // starts one client at a time: the supervisor's and the shims' start work is what a start costs
      const notRunning = state.ids.slice(state.running);
      while (state.running < runningTarget && notRunning.length && going(t0, limitMs)) await start(notRunning.shift(), agents[0]);
      if (state.created < target || state.running < runningTarget) {
        throw new Error(wasInterrupted() ? "interrupted" : `only ${state.created} created and ${state.running} running after ${Math.round(limitMs / 1000)} s`);
      }
    },
    /** `n` creates, one after the other on one connection: the ms of each, and the daemon's CPU ms a create (they stay, and count). */
    async timedCreates(n, limitMs) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const times = [];
      const t0 = now();
      const cpu0 = cpuMs(daemon.proc.pid);
      try {
        while (times.length < n && going(t0, limitMs)) {
          const s = now();
          await create(agent);
          times.push(now() - s);
        }
      } finally {
        agent.destroy();
      }
      return { times, cpuMs: (cpuMs(daemon.proc.pid) - cpu0) / Math.max(1, times.length) };
    },
    close: () => agents.forEach((a) => a.destroy()),
  };
}

/**
 * `GET path` `n` times on one keep-alive connection (bounded by `limitMs`): the median ms, and
 * the answer's length. The timed answers are read whole but not parsed: the client's JSON.parse
 * of a list of 1,000 containers would be part of every figure.
 */
async function timedGets(daemon, path, n, limitMs) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times = [];
  let body;
  let cpu0;
  const t0 = now();
  try {
    body = await expect(200, daemon.sock, "GET", path, { agent }); // warm: the connection, and the daemon's code path
    cpu0 = cpuMs(daemon.proc.pid);
    while (times.length < n && going(t0, limitMs)) {
      const s = now();
      const { status } = await call(daemon.sock, "GET", `/v1.41${path}`, { agent });
      times.push(now() - s);
      if (status !== 200) throw new Error(`GET ${path.split("?")[0]} answered ${status}`);
    }
  } finally {
    agent.destroy();
  }
  return { ms: median(times), cpuMs: (cpuMs(daemon.proc.pid) - cpu0) / Math.max(1, times.length), items: Array.isArray(body) ? body.length : undefined };
}

/** RSS (MiB) of the daemon, its supervisor (engined's / containerd) and all the containers' monitors (conmon / shims). */
export function memoryNow(daemon, supervisorPid) {
  const monitors = daemons[daemon.name].leftovers(daemon.dir);
  return {
    daemonRss: rssMiB(daemon.proc.pid),
    supervisorRss: supervisorPid ? rssMiB(supervisorPid) : 0,
    monitorsRss: monitors.reduce((sum, pid) => sum + rssMiB(pid), 0),
    monitors: monitors.length,
  };
}

/**
 * The figures of one step: with the containers there are now, the list of all and of the
 * running ones, an inspect (of the first container and of the newest), by name and by id.
 */
export async function containerStep(daemon, fill, { requests, limitMs }) {
  const { ids } = fill.state;
  const all = await timedGets(daemon, "/containers/json?all=1", requests, limitMs);
  const running = await timedGets(daemon, "/containers/json", requests, limitMs);
  if (all.items !== fill.state.created) throw new Error(`the list has ${all.items} containers, not ${fill.state.created}`);
  const target = ids.length ? ids[Math.floor(ids.length / 2)] : undefined;
  const out = { listAll: all.ms, listAllCpu: all.cpuMs, listRunning: running.ms, listRunningCpu: running.cpuMs, runningListed: running.items };
  if (target) {
    const byId = await timedGets(daemon, `/containers/${target}/json`, requests, limitMs);
    const name = (await expect(200, daemon.sock, "GET", `/containers/${target}/json`)).Name.replace(/^\//, "");
    const byName = await timedGets(daemon, `/containers/${name}/json`, requests, limitMs);
    Object.assign(out, { inspectId: byId.ms, inspectIdCpu: byId.cpuMs, inspectName: byName.ms, inspectNameCpu: byName.cpuMs });
  }
  return out;
}

/** A tar of one small file that differs by `i`: each import is an image with a layer of its own. */
async function tinyTar(i) {
  const pack = tarStream.pack();
  const chunks = [];
  const done = (async () => {
    for await (const c of pack) chunks.push(c);
  })();
  await new Promise((res, rej) => pack.entry({ name: `scale-${i}.txt`, mtime: new Date(0), mode: 0o644 }, `image ${i}\n`, (err) => (err ? rej(err) : res())));
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Imports single-layer images `scale/img:<i>` until there are `target` of them (busybox aside). */
export async function fillImages(daemon, state, target, limitMs) {
  const t0 = now();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    while (state.images < target && going(t0, limitMs)) {
      const i = state.images;
      const body = await tinyTar(i);
      const res = await call(daemon.sock, "POST", `/v1.41/images/create?fromSrc=-&repo=scale/img&tag=${i}`, { body, agent, timeoutMs: 60_000 });
      if (res.status !== 200 || /"error"/.test(res.text)) throw new Error(`image import answered ${res.status}: ${res.text.slice(0, 200)}`);
      state.images++;
    }
  } finally {
    agent.destroy();
  }
  if (state.images < target) throw new Error(wasInterrupted() ? "interrupted" : `only ${state.images} images imported in ${Math.round(limitMs / 1000)} s`);
}

/** With the images there are now: `GET /images/json`, and an inspect of one of them by name. */
export async function imageStep(daemon, state, { requests, limitMs }) {
  const list = await timedGets(daemon, "/images/json", requests, limitMs);
  const ref = state.images ? `scale/img:${Math.floor(state.images / 2)}` : "busybox:latest";
  const inspect = await timedGets(daemon, `/images/${ref}/json`, requests, limitMs);
  return { listImages: list.ms, listImagesCpu: list.cpuMs, imagesListed: list.items, inspectImage: inspect.ms, inspectImageCpu: inspect.cpuMs };
}
