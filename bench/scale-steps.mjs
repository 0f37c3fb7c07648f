// The parts of bench/scale.mjs that talk to a daemon: filling it with containers (some of them
// running) and images, and the figures taken at each step (latencies over the API, the RSS of
// the daemon, its supervisor and the containers' monitors). Every loop is bounded by a count and
// a time limit, and ends at Ctrl-C.
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
    /** `n` creates, one after the other on one connection: the ms of each (they stay, and count). */
    async timedCreates(n, limitMs) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const times = [];
      const t0 = now();
      try {
        while (times.length < n && going(t0, limitMs)) {
          const s = now();
          await create(agent);
          times.push(now() - s);
        }
      } finally {
        agent.destroy();
      }
      return times;
    },
    close: () => agents.forEach((a) => a.destroy()),
  };
}

/** `GET path` `n` times on one keep-alive connection (bounded by `limitMs`): the median ms, and the answer's length. */
async function timedGets(daemon, path, n, limitMs) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times = [];
  let body;
  const t0 = now();
  try {
    body = await expect(200, daemon.sock, "GET", path, { agent }); // warm: the connection, and the daemon's code path
    while (times.length < n && going(t0, limitMs)) {
      const s = now();
      await expect(200, daemon.sock, "GET", path, { agent });
      times.push(now() - s);
    }
  } finally {
    agent.destroy();
  }
  return { ms: median(times), items: Array.isArray(body) ? body.length : undefined };
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
  let inspectId;
  let inspectName;
  if (target) {
    inspectId = (await timedGets(daemon, `/containers/${target}/json`, requests, limitMs)).ms;
    const name = (await expect(200, daemon.sock, "GET", `/containers/${target}/json`)).Name.replace(/^\//, "");
    inspectName = (await timedGets(daemon, `/containers/${name}/json`, requests, limitMs)).ms;
  }
  return { listAll: all.ms, listRunning: running.ms, runningListed: running.items, inspectId, inspectName };
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
  return { listImages: list.ms, imagesListed: list.items, inspectImage: inspect.ms };
}
