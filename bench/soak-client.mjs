// One client of the soak: a loop of API calls over the daemon's unix socket, each picked at
// random (seeded) by weight among those that make sense for what this client owns: its
// containers (created, running, stopped), its image pulled from the registry on loopback, its
// volumes and its network. Every call expects one answer; anything else is an error, and so is
// a state the daemon reports that the client's own history contradicts (nobody else touches what
// a client made). At the end the client removes everything it made.
import { Agent } from "node:http";
import { Rng } from "../dist/test/helpers/fuzz-values.js";
import { call } from "./daemons.mjs";

const API = "/v1.41";
/** A container prints a numbered line a second; the trap makes a stop quick (`wait` is interrupted by the signal). Bounded: two hours. */
const LOOP = "trap 'exit 0' TERM; i=0; while [ $i -lt 7200 ]; do echo soak line $i; i=$((i+1)); sleep 1 & wait $!; done";
const MAX_CONTAINERS = 3;
const MAX_VOLUMES = 2;
/** A running container's logs must hold a line once it has run this long. */
const LOGS_AFTER_MS = 5000;

function messageOf(text) {
  try {
    return JSON.parse(text).message ?? text.trim();
  } catch {
    return text.trim();
  }
}

/**
 * `index`: the client's number; `sock`: the daemon's socket; `stats`: soakStats(); `seed`; `image`:
 * `{ registry: "127.0.0.1:PORT", repo }` (the client's own repository there); `label`: the run's
 * label value, put on everything made; `made`: a Set the ids of the containers, execs and networks it
 * makes are added to (what must leave no trace once removed).
 */
export function soakClient({ index, sock, stats, seed, image, label, made }) {
  const rng = new Rng(seed * 1000 + index); // the suite's seeded source: a client's choices repeat with the seed
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const containers = new Map(); // id -> { state, network, volume, runningSince }
  const volumes = new Set();
  const networks = new Set(); // ids
  const reference = `${image.registry}/${image.repo}`;
  let pulled = false;
  let serial = 0;
  const labels = { soak: label, "soak.client": String(index) };

  let failed = false; // a call of the operation under way failed
  /** One call: `want` the statuses that are no error; `check(res)` may throw for a wrong body. */
  const api = async (name, method, path, { body, want = [200], timeoutMs = 60_000, check } = {}) => {
    const r = await stats.time(name, index, async () => {
      const res = await call(sock, method, `${API}${path}`, { body, agent, timeoutMs });
      if (!want.includes(res.status)) throw new Error(`${method} ${path} answered ${res.status}: ${messageOf(res.text).slice(0, 300)}`);
      return check ? check(res) : res;
    });
    if (!r.ok) failed = true;
    return r;
  };
  const json = (res) => JSON.parse(res.text);
  const pick = (list) => rng.pick(list);
  const inState = (...states) => [...containers].filter(([, c]) => states.includes(c.state)).map(([id]) => id);
  const usedBy = (key) => new Set([...containers.values()].map((c) => c[key]).filter(Boolean));

  const ops = {
    async create() {
      const n = serial++;
      const mode = rng.next();
      const network = mode < 0.25 && networks.size ? pick([...networks]) : undefined;
      const networkMode = network ?? (mode < 0.5 ? "default" : "none");
      const volume = volumes.size && rng.next() < 0.5 ? pick([...volumes]) : undefined; // a volume may serve several containers
      const body = {
        Image: "busybox",
        Cmd: ["sh", "-c", LOOP],
        Labels: labels,
        HostConfig: { NetworkMode: networkMode, ...(volume ? { Binds: [`${volume}:/data`] } : {}) },
      };
      const r = await api("POST /containers/create", "POST", `/containers/create?name=soak-${index}-${n}`, { body, want: [201], check: json });
      if (!r.ok) return;
      containers.set(r.value.Id, { state: "created", network, volume });
      made.add(r.value.Id);
    },
    async start() {
      const id = pick(inState("created"));
      const r = await api("POST /containers/{id}/start", "POST", `/containers/${id}/start`, { want: [204] });
      if (r.ok) Object.assign(containers.get(id), { state: "running", runningSince: Date.now() });
    },
    async logs() {
      const id = pick([...containers.keys()]);
      const c = containers.get(id);
      const mustHave = c.state === "running" && Date.now() - c.runningSince > LOGS_AFTER_MS;
      await api("GET /containers/{id}/logs", "GET", `/containers/${id}/logs?stdout=1&stderr=1&tail=20`, {
        check: (res) => {
          if (mustHave && !res.text.includes("soak line")) throw new Error(`logs of ${id.slice(0, 12)}, running for ${Date.now() - c.runningSince} ms, hold no line: ${JSON.stringify(res.text.slice(0, 100))}`);
        },
      });
    },
    async exec() {
      const id = pick(inState("running"));
      const word = `soak-exec-${index}-${serial++}`;
      const created = await api("POST /containers/{id}/exec", "POST", `/containers/${id}/exec`, { body: { AttachStdout: true, AttachStderr: true, Cmd: ["echo", word] }, want: [201], check: json });
      if (!created.ok) return;
      const execId = created.value.Id;
      made.add(execId);
      const started = await api("POST /exec/{id}/start", "POST", `/exec/${execId}/start`, {
        body: { Detach: false, Tty: false },
        check: (res) => {
          if (!res.text.includes(word)) throw new Error(`exec output lacks ${word}: ${JSON.stringify(res.text.slice(0, 100))}`);
        },
      });
      if (!started.ok) return;
      await api("GET /exec/{id}/json", "GET", `/exec/${execId}/json`, {
        check: (res) => {
          const e = json(res);
          if (e.Running !== false || e.ExitCode !== 0) throw new Error(`exec ${execId.slice(0, 12)} after its output ended: Running ${e.Running}, ExitCode ${e.ExitCode}`);
        },
      });
    },
    async inspect() {
      const id = pick([...containers.keys()]);
      const want = { created: "created", running: "running", stopped: "exited" }[containers.get(id).state];
      await api("GET /containers/{id}/json", "GET", `/containers/${id}/json`, {
        check: (res) => {
          const status = json(res).State?.Status;
          if (status !== want) throw new Error(`container ${id.slice(0, 12)} is ${status}, should be ${want}`);
        },
      });
    },
    async list() {
      const filters = encodeURIComponent(JSON.stringify({ label: [`soak.client=${index}`, `soak=${label}`] }));
      await api("GET /containers/json", "GET", `/containers/json?all=1&filters=${filters}`, {
        check: (res) => {
          const listed = new Map(json(res).map((c) => [c.Id, c.State]));
          const want = { created: "created", running: "running", stopped: "exited" };
          const wrong = [...containers].filter(([id, c]) => listed.get(id) !== want[c.state]).map(([id, c]) => `${id.slice(0, 12)} ${listed.get(id) ?? "missing"} (should be ${want[c.state]})`);
          if (wrong.length || listed.size !== containers.size) throw new Error(`list: ${listed.size} listed, ${containers.size} made; ${wrong.join(", ")}`);
        },
      });
    },
    async stop() {
      const id = pick(inState("running"));
      const r = await api("POST /containers/{id}/stop", "POST", `/containers/${id}/stop?t=10`, { want: [204] });
      if (r.ok) containers.get(id).state = "stopped";
    },
    async rm() {
      const id = pick(inState("created", "stopped"));
      const r = await api("DELETE /containers/{id}", "DELETE", `/containers/${id}`, { want: [204] });
      if (r.ok) containers.delete(id);
    },
    async rmForce() {
      const id = pick(inState("running"));
      const r = await api("DELETE /containers/{id}?force=1", "DELETE", `/containers/${id}?force=1`, { want: [204] });
      if (r.ok) containers.delete(id);
    },
    async pull() {
      const r = await api("POST /images/create (pull)", "POST", `/images/create?fromImage=${encodeURIComponent(reference)}&tag=latest`, {
        timeoutMs: 120_000,
        check: (res) => {
          const lines = res.text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
          const failed = lines.find((l) => l.error || l.errorDetail);
          if (failed) throw new Error(`pull of ${reference}: ${failed.error ?? failed.errorDetail?.message}`);
          if (!/^Status: Downloaded newer image for /.test(lines.at(-1)?.status ?? "")) throw new Error(`pull of ${reference} ended with ${JSON.stringify(lines.at(-1))}`);
        },
      });
      if (r.ok) pulled = true;
    },
    async rmi() {
      const r = await api("DELETE /images/{name}", "DELETE", `/images/${reference}:latest`);
      if (r.ok) pulled = false;
    },
    async volumeCreate() {
      const name = `soak-${index}-v${serial++}`;
      const r = await api("POST /volumes/create", "POST", "/volumes/create", { body: { Name: name, Labels: labels }, want: [201] });
      if (r.ok) volumes.add(name);
    },
    async volumeRm(name = pick([...volumes].filter((v) => !usedBy("volume").has(v)))) {
      const r = await api("DELETE /volumes/{name}", "DELETE", `/volumes/${name}`, { want: [204] });
      if (r.ok) volumes.delete(name);
    },
    async networkCreate() {
      const name = `soak-${index}-n${serial++}`;
      const r = await api("POST /networks/create", "POST", "/networks/create", { body: { Name: name, Driver: "bridge", Labels: labels, CheckDuplicate: true }, want: [201], check: json });
      if (!r.ok) return;
      networks.add(r.value.Id);
      made.add(r.value.Id);
      // the subnet the daemon chose is no other network's (the clients create theirs at the same time)
      await api("GET /networks", "GET", "/networks", {
        check: (res) => {
          const all = json(res);
          const subnets = (n) => (n?.IPAM?.Config ?? []).map((c) => c.Subnet).filter(Boolean);
          const mine = subnets(all.find((n) => n.Id === r.value.Id));
          const clash = all.filter((n) => n.Id !== r.value.Id && subnets(n).some((s) => mine.includes(s)));
          if (clash.length) throw new Error(`network ${name} got subnet ${mine.join(", ")}, the subnet of ${clash.map((n) => n.Name).join(", ")} too`);
        },
      });
    },
    async networkRm(id = pick([...networks].filter((n) => !usedBy("network").has(n)))) {
      const r = await api("DELETE /networks/{id}", "DELETE", `/networks/${id}`, { want: [204] });
      if (r.ok) networks.delete(id);
    },
  };

  /** [operation, weight, whether it applies now] */
  const menu = () => {
    const inUseVolumes = usedBy("volume");
    const inUseNetworks = usedBy("network");
    return [
      ["create", 3, containers.size < MAX_CONTAINERS],
      ["start", 3, inState("created").length > 0],
      ["logs", 3, containers.size > 0],
      ["exec", 3, inState("running").length > 0],
      ["inspect", 4, containers.size > 0],
      ["list", 2, true],
      ["stop", 2, inState("running").length > 0],
      ["rm", 2, inState("created", "stopped").length > 0],
      ["rmForce", 1, inState("running").length > 0],
      ["pull", 1, !pulled],
      ["rmi", 1, pulled],
      ["volumeCreate", 1, volumes.size < MAX_VOLUMES],
      ["volumeRm", 1, [...volumes].some((v) => !inUseVolumes.has(v))],
      ["networkCreate", 1, networks.size < 1],
      ["networkRm", 1, [...networks].some((n) => !inUseNetworks.has(n))],
    ].filter(([, , applies]) => applies);
  };

  /**
   * After an error the client's idea of what it owns may be wrong (a create that failed may have
   * made its container, a remove answered 500 may have removed): it learns it again from the
   * daemon, so that one fault is counted once and not again by every later call it would spoil.
   * These reads are not timed or counted; a read that fails leaves the client's idea as it was.
   */
  const resync = async () => {
    const get = async (path) => {
      const res = await call(sock, "GET", `${API}${path}`, { agent, timeoutMs: 30_000 }).catch(() => undefined);
      return res && (res.status === 200 ? JSON.parse(res.text) : res.status);
    };
    const mine = encodeURIComponent(JSON.stringify({ label: [`soak.client=${index}`, `soak=${label}`] }));
    const listed = await get(`/containers/json?all=1&filters=${mine}`);
    if (Array.isArray(listed)) {
      const now = new Map(listed.map((c) => [c.Id, c]));
      for (const id of [...containers.keys()]) if (!now.has(id)) containers.delete(id);
      for (const [id, c] of now) {
        const state = c.State === "running" ? "running" : c.State === "created" ? "created" : "stopped";
        const known = containers.get(id);
        if (known) Object.assign(known, { state, runningSince: known.state === state ? known.runningSince : Date.now() });
        else {
          const network = [...networks].find((n) => Object.values(c.NetworkSettings?.Networks ?? {}).some((e) => e.NetworkID === n));
          const volume = c.Mounts?.find((m) => m.Type === "volume")?.Name;
          containers.set(id, { state, network, volume, runningSince: Date.now() });
        }
      }
    }
    const vols = await get(`/volumes?filters=${mine}`);
    if (vols?.Volumes) {
      volumes.clear();
      for (const v of vols.Volumes) volumes.add(v.Name);
    }
    const nets = await get(`/networks?filters=${mine}`);
    if (Array.isArray(nets)) {
      networks.clear();
      for (const n of nets) networks.add(n.Id);
    }
    const img = await get(`/images/${reference}:latest/json`);
    if (img === 404 || typeof img === "object") pulled = img !== 404;
  };

  return {
    /** Calls until `going()` says stop, or `maxCalls` operations. */
    async run(going, maxCalls = 1_000_000) {
      for (let i = 0; i < maxCalls && going(); i++) {
        const op = rng.weighted(menu().map(([name, weight]) => [weight, () => name]));
        failed = false;
        await ops[op]();
        if (failed) await resync();
      }
    },
    /** Removes everything this client made (recorded as calls like the others); then closes its connections. */
    async cleanup() {
      for (const id of [...containers.keys()]) {
        const r = await api("DELETE /containers/{id}?force=1", "DELETE", `/containers/${id}?force=1`, { want: [204] });
        if (r.ok) containers.delete(id);
      }
      if (pulled) await ops.rmi();
      for (const name of [...volumes]) await ops.volumeRm(name);
      for (const id of [...networks]) await ops.networkRm(id);
      agent.destroy();
    },
  };
}
