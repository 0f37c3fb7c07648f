/**
 * The daemon's pull through the API, for the pull fault tests (test/registry-pull-faults*.test.ts):
 * daemons started without the test's proxy variables and stopped after each test (their output
 * shown when it failed), `POST /images/create` read to the end as JSON lines (bounded, with a hook
 * to disconnect mid-pull), what a pull left in the data root, and checks that the daemon still
 * serves. Nothing here sends traffic beyond the daemon's socket and the registries a test starts.
 */
import { randomBytes } from "node:crypto";
import { request as httpRequestRaw } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { filesUnder } from "./daemon-leftovers.js";
import { startEngined, type TestDaemon } from "./engined.js";
import { httpRequest } from "./http.js";
import { makeTar } from "../fixtures/images.js";

export interface Line {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  errorDetail?: { message: string };
  error?: string;
}

export interface PullAnswer {
  status: number;
  /** The JSON lines of a 200; empty otherwise. */
  lines: Line[];
  /** The error message of a non-200 answer. */
  message?: string;
  body: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Proxy variables of the test's own environment must not reach the daemons. */
const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

/** The daemons the running test started: their output is shown when it fails, and they are stopped after it. */
let started: TestDaemon[] = [];

export async function start(args: string[] = []): Promise<TestDaemon> {
  const d = await startEngined({ args, env: NO_PROXY_ENV });
  started.push(d);
  return d;
}

/** Hooks of a suite whose daemons come from `start`: a failure shows what they logged; none outlives its test. */
export function daemonHooks(): void {
  afterEach(async function () {
    const failed = this.currentTest?.state === "failed";
    for (const d of started) {
      if (failed) console.log(`--- engined ${d.dir} output (last 4000 chars):\n${d.output().slice(-4000)}`);
      await d.stop();
    }
    started = [];
  });
}

/**
 * `POST /images/create?...` read to the end (bounded). `onResponse` sees the request once
 * the answer starts and every line as it comes (to disconnect mid-pull).
 */
export function pull(
  d: TestDaemon,
  query: Record<string, string>,
  opts: { timeoutMs?: number; onLine?: (line: Line, abort: () => void) => void } = {},
): Promise<PullAnswer> {
  return new Promise((resolve, reject) => {
    const path = `/v1.51/images/create?${new URLSearchParams(query).toString()}`;
    let settled = false;
    const why = (err: Error) =>
      new Error(`pull ${path}: ${err.message}${d.proc.exitCode !== null || d.proc.signalCode !== null ? ` (engined exited:\n${d.output().slice(-2000)})` : ""}`);
    const req = httpRequestRaw({ socketPath: d.socket, method: "POST", path, headers: { "content-length": 0 } }, (res) => {
      let text = "";
      const lines: Line[] = [];
      let partial = "";
      const abort = () => {
        settled = true;
        req.destroy();
        resolve({ status: res.statusCode ?? 0, lines, body: text });
      };
      res.on("data", (chunk: Buffer) => {
        const s = chunk.toString();
        text += s;
        if (res.statusCode !== 200) return;
        partial += s;
        let nl: number;
        while (!settled && (nl = partial.indexOf("\n")) >= 0) {
          const raw = partial.slice(0, nl).trim();
          partial = partial.slice(nl + 1);
          if (!raw) continue;
          const line = JSON.parse(raw) as Line;
          lines.push(line);
          opts.onLine?.(line, abort);
        }
      });
      res.on("end", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (res.statusCode === 200) return resolve({ status: 200, lines, body: text });
        let message: string | undefined;
        try {
          message = (JSON.parse(text) as { message?: string }).message;
        } catch {
          message = text;
        }
        resolve({ status: res.statusCode ?? 0, lines, message, body: text });
      });
      res.on("error", (err) => {
        if (!settled) reject(why(err));
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`pull ${path} did not end within ${opts.timeoutMs ?? 30_000} ms`)), opts.timeoutMs ?? 30_000);
    req.on("error", (err) => {
      clearTimeout(timer);
      // a cut stream: give the daemon a moment to be seen exiting, if it did
      if (!settled) setTimeout(() => reject(why(err)), 200);
    });
    req.on("close", () => clearTimeout(timer));
    req.end();
  });
}

/** A pull that must succeed: 200, and no error line. */
export async function pullOk(d: TestDaemon, query: Record<string, string>): Promise<Line[]> {
  const r = await pull(d, query);
  expect(r.status, r.body).to.equal(200);
  const err = r.lines.find((l) => l.errorDetail || l.error);
  expect(err, `pull failed: ${JSON.stringify(err)}\n${d.output().slice(-3000)}`).to.equal(undefined);
  expect(r.lines.at(-1)?.status, r.body).to.match(/^Status: (Downloaded newer image|Image is up to date) for /);
  return r.lines;
}

/** The stream's last line: the error it ended with. */
export function endError(r: PullAnswer): string {
  expect(r.status, r.body).to.equal(200);
  const last = r.lines.at(-1);
  expect(last?.errorDetail, `the stream must end with an error line: ${r.body}`).to.be.an("object");
  expect(last!.error).to.equal(last!.errorDetail!.message);
  return last!.errorDetail!.message;
}

export async function inspect(d: TestDaemon, name: string): Promise<{ status: number; image?: Record<string, any> }> {
  const r = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/images/${name}/json`);
  return { status: r.status, image: r.status === 200 ? JSON.parse(r.body) : undefined };
}

export async function imageCount(d: TestDaemon): Promise<number> {
  const r = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/json?all=1");
  expect(r.status).to.equal(200);
  return (JSON.parse(r.body) as unknown[]).length;
}

/**
 * What a pull can leave in the data root: image records, layer records (and the pending marks
 * next to them), blobs, the storage driver's layer folders and short links, temporary files.
 */
export function dataFiles(d: TestDaemon): Set<string> {
  const data = join(d.dir, "data");
  const out = new Set<string>();
  const list = (dir: string, recurse: boolean) => {
    for (const f of filesUnder(dir, recurse ? 64 : 0)) out.add(join(dir, f.replace(/\/$/, "")));
  };
  list(join(data, "image/images"), false);
  list(join(data, "image/layers"), false);
  list(join(data, "image/blobs/sha256"), false);
  list(join(data, "overlay2"), false);
  list(join(data, "overlay2/l"), false);
  list(join(data, "tmp"), true);
  return out;
}

export const newSince = (before: Set<string>, after: Set<string>) => [...after].filter((p) => !before.has(p)).sort();

/** Waits (bounded) until nothing is in the data root that was not before; resolves with what is. */
export async function settleLeftovers(d: TestDaemon, before: Set<string>, ms = 10_000): Promise<string[]> {
  const until = Date.now() + ms;
  let left = newSince(before, dataFiles(d));
  while (left.length > 0 && Date.now() < until) {
    await sleep(100);
    left = newSince(before, dataFiles(d));
  }
  return left;
}

/** A layer tar holding `size` random (incompressible) bytes: its gzip is about as big. */
export const randomLayer = (name: string, size: number) => makeTar([{ name: `${name}/`, type: "directory" }, { name: `${name}/data.bin`, data: randomBytes(size) }]);

export const hostPort = (host: string) => {
  const i = host.lastIndexOf(":");
  return { host: host.slice(0, i), port: Number(host.slice(i + 1)) };
};

export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** The daemon did not fall over on the way (a failed pull must not take it down): its process runs and answers. */
export async function expectServing(d: TestDaemon): Promise<void> {
  await sleep(200);
  expect(d.proc.exitCode, `engined exited:\n${d.output().slice(-3000)}`).to.equal(null);
  expect(d.proc.signalCode).to.equal(null);
  expect((await httpRequest({ socketPath: d.socket }, "GET", "/_ping")).body).to.equal("OK");
}

export const waiting = (lines: Line[]) => lines.filter((l) => l.status === "Waiting");
