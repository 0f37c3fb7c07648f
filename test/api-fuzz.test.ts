/**
 * The API fuzz (issue 27, "4xx for every client error"): at least 10,000 generated requests
 * over every route the daemon serves (read from its own route table, so a new route is covered
 * at once), with wrong JSON types, broken JSON, bodies that are not archives, cut and garbled
 * tars, archives whose entries climb out, bad ids, names and query values, wrong content types.
 * It holds that no answer is a 5xx (the one exception: a request naming the fuzz's registry,
 * where nothing listens, may be told so with Docker's 500), that the daemon stays up, and that
 * afterwards everything the requests made can be removed through the API and nothing is left:
 * no temporary file, mount, process, and no file written outside a container.
 *
 * Seeded: the seed is printed; `ENGINE_FUZZ_SEED=<n>` runs that seed again, `ENGINE_FUZZ_ONLY=
 * <i>,<j>` only those requests of it (each request is made from its own random source), and
 * `ENGINE_FUZZ_REQUESTS` / `ENGINE_FUZZ_CONCURRENCY` change how many and how many at once.
 * The daemon runs in a network namespace of its own: nothing it is asked to reach can leave
 * the machine. Requests go only to its unix socket.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { errors } from "../core/errors.js";
import { busyboxRootfs } from "./fixtures/images.js";
import { fuzzRequest, FUZZ_REGISTRY, pickRoute, type FuzzRequest, type FuzzWorld } from "./helpers/api-fuzz-gen.js";
import { daemonProcesses, extraProcesses, filesUnder, mountsUnder, settle, type HostProcess } from "./helpers/daemon-leftovers.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { archivePool, escapedCanaries } from "./helpers/fuzz-archives.js";
import { requestRng } from "./helpers/fuzz-values.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";

const SEED = Number(process.env.ENGINE_FUZZ_SEED ?? 27);
const COUNT = Number(process.env.ENGINE_FUZZ_REQUESTS ?? 10_000);
const ONLY = (process.env.ENGINE_FUZZ_ONLY ?? "").split(",").filter(Boolean).map(Number);
const CONCURRENCY = Number(process.env.ENGINE_FUZZ_CONCURRENCY ?? 8);
/** The daemon's limit on a JSON body (host/api/app.ts). */
const JSON_BODY_LIMIT = 32 * 1024 * 1024;
/** The whole run's bound; on 2 CPUs the 10,000 requests take well under a minute. */
const RUN_MS = 180_000;
/** A request waits this long for its answer's status line (a stop with `t=1000` takes longer: a timeout, not a failure). */
const ANSWER_MS = 8_000;

interface Answer {
  status: number | "timeout" | "reset";
  message: string;
}

/** One request to the daemon's socket; resolves with the status as soon as it comes (the rest of a stream is dropped). */
function send(socketPath: string, req: FuzzRequest): Promise<Answer> {
  return new Promise((resolve) => {
    const headers = { ...req.headers };
    if (req.body && !req.chunked) headers["content-length"] = String(req.body.length);
    const r = request({ socketPath, method: req.method, path: req.path, headers, agent: false });
    const timer = setTimeout(() => finish({ status: "timeout", message: "" }), ANSWER_MS);
    let done = false;
    /** The status, once it came: a connection the daemon closes after its answer is still an answer. */
    let status: number | undefined;
    const finish = (a: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      r.destroy();
      resolve(a);
    };
    r.on("upgrade", (res: IncomingMessage) => finish({ status: res.statusCode ?? 101, message: "" }));
    let text = "";
    r.on("response", (res) => {
      status = res.statusCode ?? 0;
      if (status < 400) return finish({ status, message: "" });
      res.on("data", (d: Buffer) => {
        if (text.length < 4096) text += d.toString();
      });
      res.on("end", () => finish({ status: status!, message: messageOf(text) }));
      res.on("error", () => finish({ status: status!, message: messageOf(text) }));
    });
    r.on("error", (err) => finish(status === undefined ? { status: "reset", message: err.message } : { status, message: messageOf(text) }));
    if (req.body && req.chunked) {
      const half = Math.floor(req.body.length / 2);
      r.write(req.body.subarray(0, half));
      r.end(req.body.subarray(half));
    } else {
      r.end(req.body);
    }
  });
}

function messageOf(text: string): string {
  try {
    return String((JSON.parse(text) as { message?: unknown }).message ?? text);
  } catch {
    return text;
  }
}

/**
 * The 5xx answers that are not about the request but the daemon's state, Docker's own and what
 * clients expect: a node outside a swarm answers the cluster routes so whatever is asked (after
 * their own parameters are checked; core/cluster/outside-swarm.ts), the logs of a container
 * whose log driver keeps none (`none`) are a 501, and so are the checkpoint endpoints (Docker's
 * answer outside experimental mode; api/routes/checkpoints.ts).
 */
const STATE_ANSWERS = [
  errors.clusterNotManager(), errors.clusterNotMember(), errors.clusterJoinUnsupported(), errors.containerLogsUnreadable(), errors.apiExperimentalDisabled(), errors.apiCheckpointUnsupported(),
].map((e) => e.message);

/** Whether a 5xx is the fuzz's registry being unreachable (nothing listens there; Docker answers 500), or a state answer. */
function notAboutTheRequest(answer: Answer): "unreachable" | "state" | undefined {
  if (answer.status === 500 && answer.message.includes(FUZZ_REGISTRY) && /connect: connection refused/.test(answer.message)) return "unreachable";
  if (STATE_ANSWERS.includes(answer.message)) return "state";
  return undefined;
}

/** A JSON request of the test's own (fixtures, clean-up); resolves with the status and the parsed body. */
async function api(d: TestDaemon, method: string, path: string, body?: unknown, raw?: Buffer): Promise<{ status: number; json: any }> {
  const data = raw ?? (body === undefined ? undefined : Buffer.from(JSON.stringify(body)));
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = data ? { "content-type": raw ? "application/x-tar" : "application/json", "content-length": String(data.length) } : {};
    const r = request({ socketPath: d.socket, method, path, headers, agent: false, timeout: 60_000 }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    r.on("timeout", () => r.destroy(new Error(`${method} ${path} timed out`)));
    r.on("error", reject);
    r.end(data);
  });
}

async function ok(d: TestDaemon, method: string, path: string, body?: unknown, raw?: Buffer): Promise<any> {
  const res = await api(d, method, path, body, raw);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** The routes the daemon logged at start (host/api/app.ts), `METHOD /pattern`. */
function routeTable(d: TestDaemon): string[] {
  for (const line of d.output().split("\n")) {
    if (!line.includes('"API routes"')) continue;
    return (JSON.parse(line) as { routes: string[] }).routes;
  }
  throw new Error("the daemon did not log its routes");
}

/** What the API lists, by kind: the ids of containers, images, volumes and networks. */
async function apiObjects(d: TestDaemon): Promise<Record<string, string[]>> {
  const containers = (await ok(d, "GET", "/containers/json?all=1")) as { Id: string }[];
  const images = (await ok(d, "GET", "/images/json?all=1")) as { Id: string }[];
  const volumes = (await ok(d, "GET", "/volumes")) as { Volumes: { Name: string }[] };
  const networks = (await ok(d, "GET", "/networks")) as { Id: string }[];
  return {
    containers: containers.map((c) => c.Id).sort(),
    images: images.map((i) => i.Id).sort(),
    volumes: volumes.Volumes.map((v) => v.Name).sort(),
    networks: networks.map((n) => n.Id).sort(),
  };
}

/** Removes through the API what the fuzz made (what is not in `keep`); resolves with the removals the daemon refused. */
async function removeMade(d: TestDaemon, keep: Record<string, string[]>): Promise<string[]> {
  const refused: string[] = [];
  const remove = async (path: string) => {
    const res = await api(d, "DELETE", path);
    if (res.status >= 300 && res.status !== 404) refused.push(`DELETE ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  };
  const made = async (kind: string) => (await apiObjects(d))[kind].filter((id) => !keep[kind].includes(id));
  for (const id of await made("containers")) await remove(`/containers/${id}?force=1&v=1`);
  // images made from images (commits, builds) go after them: a few passes
  for (let pass = 0; pass < 5 && (await made("images")).length > 0; pass++) {
    for (const id of await made("images")) await api(d, "DELETE", `/images/${id}?force=1`);
  }
  for (const id of await made("images")) await remove(`/images/${id}?force=1`);
  for (const name of await made("volumes")) await remove(`/volumes/${encodeURIComponent(name)}?force=1`);
  for (const id of await made("networks")) await remove(`/networks/${id}`);
  return refused;
}

/**
 * What is under `root` that was not before, or that names one of `gone` (removed since): but the
 * empty working folders the daemon makes on first use (`cp/` under the exec root). An empty
 * folder named by an id (a container's, an exec's) still counts.
 */
function leftovers(root: string, before: readonly string[], gone: readonly string[]): string[] {
  const workingFolder = (f: string) => f.endsWith("/") && !/[0-9a-f]{64}/.test(f) && filesUnder(join(root, f), 0).length === 0;
  return filesUnder(root).filter((f) => (!before.includes(f) && !workingFolder(f)) || gone.some((id) => f.includes(id)));
}

/** The processes of a container (conmon, named by the container's id, and what it runs). */
function containerProcesses(all: readonly HostProcess[], id: string): Set<number> {
  const out = new Set(all.filter((p) => p.command.includes(id)).map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (out.has(p.ppid) && !out.has(p.pid)) grew = out.add(p.pid) !== undefined;
  }
  return out;
}

describe("API fuzz: every client error is a 4xx", function () {
  this.timeout(RUN_MS + 120_000);
  let ns: Netns | undefined;
  let d: TestDaemon | undefined;

  before(async function () {
    this.timeout(60_000);
    ns = makeNetns();
    d = await startEngined({ netns: ns.file, args: ["--bridge", "none", "--log-level", "debug", "--log-format", "json"] });
  });

  afterEach(function () {
    // what the daemon said about its failures (their stacks) is how a failure here is fixed
    if (this.currentTest?.state !== "failed" || !d) return;
    if (process.env.ENGINE_FUZZ_LOG) writeFileSync(process.env.ENGINE_FUZZ_LOG, d.output());
    const failures = d.output().split("\n").filter((l) => /"level":"(error|fatal)"/.test(l));
    console.log(`--- engined's errors (${failures.length}), the last 30:\n${failures.slice(-30).join("\n")}\n--- its last output:\n${d.output().slice(-3000)}`);
  });

  after(async () => {
    await d?.stop();
    ns?.remove();
  });

  it(`answers ${COUNT} generated requests over every route with no 5xx, stays up, and leaves nothing behind`, async () => {
    const daemon = d!;
    const pid = daemon.proc.pid!;
    const routes = routeTable(daemon);
    expect(routes.length).to.be.greaterThan(60);
    const data = join(daemon.dir, "data");
    const exec = join(daemon.dir, "exec");
    const canary = `fz-escape-${SEED}`;
    const passwdLinks = statSync("/etc/passwd").nlink;

    // what is there before anything is made
    const emptyObjects = await apiObjects(daemon);
    const mountsBefore = mountsUnder(daemon.dir);
    const tmpBefore = filesUnder(join(data, "tmp"));

    // fixtures: an image, a running container and a created one, an exec, a volume, a network
    const base = await ok(daemon, "POST", "/images/create?fromSrc=-&repo=fz-base&tag=latest", undefined, await busyboxRootfs());
    const imageId = String(base).match(/sha256:[0-9a-f]{64}/)?.[0] ?? JSON.stringify(base);
    const run = (await ok(daemon, "POST", "/containers/create?name=fz-run", { Image: "fz-base", Cmd: ["sleep", "3600"], OpenStdin: true })) as { Id: string };
    await ok(daemon, "POST", `/containers/${run.Id}/start`);
    const idle = (await ok(daemon, "POST", "/containers/create?name=fz-idle", { Image: "fz-base", Cmd: ["true"] })) as { Id: string };
    const execId = ((await ok(daemon, "POST", `/containers/${run.Id}/exec`, { Cmd: ["true"] })) as { Id: string }).Id;
    await ok(daemon, "POST", "/volumes/create", { Name: "fz-vol-0" });
    const net = (await ok(daemon, "POST", "/networks/create", { Name: "fz-net-0", Driver: "bridge" })) as { Id: string };
    const processesBefore = daemonProcesses(pid, daemon.dir);
    const execBefore = filesUnder(exec);

    const world: FuzzWorld = {
      known: {
        container: [run.Id, "fz-run", idle.Id, "fz-idle"],
        image: ["fz-base", imageId],
        volume: ["fz-vol-0"],
        network: [net.Id, "fz-net-0", "none", "host"],
        exec: [execId],
      },
      scratch: makeTempDir("engine-fuzz-scratch-"),
      archives: await archivePool(canary),
    };

    const indexes = ONLY.length ? ONLY : Array.from({ length: COUNT }, (_, i) => i);
    console.log(`      api fuzz: seed ${SEED} (ENGINE_FUZZ_SEED), ${indexes.length} requests over ${routes.length} routes, ${CONCURRENCY} at once`);
    const faults: { req: FuzzRequest; answer: Answer }[] = [];
    const unanswered: { req: FuzzRequest; answer: Answer }[] = [];
    const statuses = new Map<string, number>();
    const excused = { unreachable: 0, state: 0 };
    const timeByRoute = new Map<string, [number, number]>();
    const fuzzedRequests: FuzzRequest[] = [];
    let next = 0;
    let died = "";
    const began = Date.now();
    const worker = async () => {
      while (next < indexes.length && !died && Date.now() - began < RUN_MS) {
        const index = indexes[next++];
        const rng = requestRng(SEED, index);
        const req = fuzzRequest(rng, index, pickRoute(rng, routes), world);
        if (ONLY.length) fuzzedRequests.push(req);
        const sentAt = Date.now();
        const answer = await send(daemon.socket, req);
        const spent = timeByRoute.get(req.route) ?? [0, 0];
        timeByRoute.set(req.route, [spent[0] + 1, spent[1] + Date.now() - sentAt]);
        // a HEAD answer has no message: the same request as a GET says it
        if (req.method === "HEAD" && typeof answer.status === "number" && answer.status >= 500) {
          answer.message = `(as a GET) ${(await send(daemon.socket, { ...req, method: "GET" })).message}`.replace(/^\(as a GET\) (.*)$/, (m, text: string) => (notAboutTheRequest({ ...answer, message: text }) ? text : m));
        }
        statuses.set(String(answer.status), (statuses.get(String(answer.status)) ?? 0) + 1);
        const excuse = notAboutTheRequest(answer);
        if (typeof answer.status !== "number") unanswered.push({ req, answer });
        else if (excuse) excused[excuse]++;
        else if (answer.status >= 500) faults.push({ req, answer });
        if (daemon.proc.exitCode !== null || daemon.proc.signalCode !== null) died = `engined exited (${daemon.proc.exitCode ?? daemon.proc.signalCode}) after request ${index}`;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (Date.now() - began) / 1000;
    console.log(`      api fuzz: ${next} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; ` +
        `${excused.unreachable} told the fuzz's registry is unreachable, ${excused.state} answered by the daemon's state (no swarm, no logs kept)`);

    if (process.env.ENGINE_FUZZ_VERBOSE) {
      const slowest = [...timeByRoute].sort((a, b) => b[1][1] - a[1][1]).slice(0, 15);
      console.log(slowest.map(([route, [n, ms]]) => `      ${route}: ${n} requests, ${(ms / 1000).toFixed(1)} s`).join("\n"));
      if (ONLY.length) console.log(fuzzedRequests.map((r) => `      #${r.index} ${r.method} ${r.path.slice(0, 300)} ${JSON.stringify(r.headers)} ${r.body?.length ?? 0} bytes${r.chunked ? " chunked" : ""}`).join("\n"));
      console.log(unanswered.slice(0, 40).map((u) => `      #${u.req.index} ${u.req.route} ${u.answer.status} ${u.answer.message} ${u.req.method} ${u.req.path.slice(0, 150)} [${u.req.headers["content-type"]}, ${u.req.body?.length ?? 0}${u.req.chunked ? " chunked" : ""}] ${JSON.stringify(u.req.headers).slice(0, 200)}`).join("\n"));
    }
    const show = ({ req, answer }: { req: FuzzRequest; answer: Answer }) =>
      `#${req.index} ${req.route} -> ${answer.status} ${JSON.stringify(answer.message.slice(0, 300))}\n        ${req.method} ${req.path.slice(0, 300)} [${req.headers["content-type"] ?? "no type"}, ${req.body?.length ?? 0} bytes${req.chunked ? ", chunked" : ""}]` +
      (req.body?.length ? `\n        body: ${JSON.stringify(req.body.subarray(0, 160).toString("latin1"))}` : "");
    expect(died, died).to.equal("");
    if (faults.length > 0) {
      // one example of each route and message (ids and numbers folded), with how often it came
      const kinds = new Map<string, { count: number; first: (typeof faults)[number] }>();
      for (const f of faults) {
        const key = `${f.req.route} ${f.answer.status} ${f.answer.message.replace(/[0-9a-f]{12,}|\d+/g, "N").slice(0, 120)}`;
        kinds.set(key, { count: (kinds.get(key)?.count ?? 0) + 1, first: kinds.get(key)?.first ?? f });
      }
      const list = [...kinds.values()].map((k) => `${k.count} x ${show(k.first)}`);
      expect.fail(`${faults.length} answers of 5xx, ${kinds.size} kinds (repeat one with ENGINE_FUZZ_SEED=${SEED} ENGINE_FUZZ_ONLY=<index>):\n${list.join("\n")}`);
    }
    expect(next, `only ${next} requests within ${RUN_MS / 1000} s`).to.equal(indexes.length);
    // every route had its share (a run of ENGINE_FUZZ_ONLY has not)
    if (!ONLY.length) expect(routes.filter((r) => (timeByRoute.get(r)?.[0] ?? 0) < COUNT / routes.length / 4), "routes seldom or never fuzzed").to.deep.equal([]);
    // a request may wait past the client's patience (a stop's timeout): few, and never a dropped connection
    // a body past the daemon's limit is answered 413 at once and the connection closed: a client
    // still sending it may see its write fail first (Node's server does not read the rest)
    const resets = unanswered.filter((u) => u.answer.status === "reset" && (u.req.body?.length ?? 0) <= JSON_BODY_LIMIT);
    if (resets.length > 0) expect.fail(`${resets.length} connections dropped without an answer:\n${resets.slice(0, 30).map(show).join("\n")}`);
    expect(unanswered.length, unanswered.slice(0, 20).map(show).join("\n")).to.be.lessThan(Math.max(10, indexes.length / 200));
    expect((await api(daemon, "GET", "/_ping")).status).to.equal(200);

    // everything made is removed through the API, then nothing is left
    const refused = await removeMade(daemon, emptyObjects);
    expect(refused, "objects the API could not remove").to.deep.equal([]);
    expect(await apiObjects(daemon)).to.deep.equal(emptyObjects);
    const fixtureProcesses = containerProcesses(processesBefore, run.Id);
    const expected = processesBefore.filter((p) => !fixtureProcesses.has(p.pid));
    expect((await settle(() => extraProcesses(expected, daemonProcesses(pid, daemon.dir)))).map((p) => p.command), "processes left").to.deep.equal([]);
    expect(await settle(() => mountsUnder(daemon.dir).filter((m) => !mountsBefore.includes(m))), "mounts left").to.deep.equal([]);
    const fixtureIds = [run.Id, idle.Id, execId];
    expect(await settle(() => leftovers(join(data, "tmp"), tmpBefore, fixtureIds)), "temporary files left").to.deep.equal([]);
    expect(await settle(() => leftovers(exec, execBefore, fixtureIds)), "files left under the exec root").to.deep.equal([]);
    const escaped = escapedCanaries(canary, daemon.dir);
    for (const path of escaped) rmSync(path, { force: true, recursive: true });
    expect(escaped, "files written outside a container").to.deep.equal([]);
    expect(statSync("/etc/passwd").nlink, "a hard link to /etc/passwd was made").to.equal(passwdLinks);
    expect(daemon.proc.pid).to.equal(pid);
    expect(daemon.proc.exitCode).to.equal(null);
  });
});
