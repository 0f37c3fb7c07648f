/**
 * `POST /build` below any client, for the builder's tests: a context written as files or a tar,
 * the request sent to a daemon's unix socket (engined's or dockerd's) with its query and
 * headers, the answer read as Docker's JSON lines, the connection cut when a message shows up
 * (a client going away mid-step), and what a build may leave on the daemon's side (its folders
 * and mounts) listed.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { createServer, request, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { makeTar, type TarEntry } from "../fixtures/images.js";
import { makeTempDir } from "./engined.js";

export interface BuildMessage {
  stream?: string;
  status?: string;
  progress?: string;
  progressDetail?: { current?: number; total?: number };
  id?: string;
  aux?: { ID?: string };
  error?: string;
  errorDetail?: { message: string; code?: number };
}

export interface BuildAnswer {
  status: number;
  /** The JSON lines of a 200 (none for an error answered before the stream). */
  messages: BuildMessage[];
  /** The body as text (the error message of a 4xx/5xx answer is in it). */
  body: string;
  /** The `stream` texts joined: what the Docker CLI prints. */
  text: string;
  /** The stream's error, if it ended with one. */
  error?: string;
  /** The image ID a good build announced (`aux.ID`, or the quiet build's line). */
  imageId?: string;
  /** The request was cut by `abortWhen`. */
  aborted: boolean;
}

/** A folder with these files (parents made); a Buffer is written as is. */
export function contextDir(files: Record<string, string | Buffer>): string {
  const dir = makeTempDir("engine-build-ctx-");
  for (const [name, data] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), data);
  }
  return dir;
}

/** A context tar of these files (mode 0644, root's). */
export function contextTar(files: Record<string, string | Buffer>): Promise<Buffer> {
  return makeTar(Object.entries(files).map(([name, data]): TarEntry => ({ name, data })));
}

export interface BuildRequest {
  /** The query, without `?`: `t=x&q=1`. Objects (buildargs, labels) are JSON-encoded by the caller. */
  query?: Record<string, string | string[]>;
  body?: Buffer;
  headers?: Record<string, string>;
  /** Cuts the connection once a message makes this true (the client goes away). */
  abortWhen?: (m: BuildMessage) => boolean;
  timeoutMs?: number;
}

function queryString(query: Record<string, string | string[]> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) params.append(k, one);
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** POSTs a build to the daemon at `socketPath`; resolves with its whole answer (or what came before the cut). */
export function postBuild(socketPath: string, req: BuildRequest): Promise<BuildAnswer> {
  const body = req.body ?? Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    let text = "";
    let aborted = false;
    const messages: BuildMessage[] = [];
    const finish = (status: number) => {
      const stream = messages.map((m) => m.stream ?? "").join("");
      const error = messages.find((m) => m.error)?.error;
      const quietId = messages.length === 1 ? /^(sha256:[0-9a-f]{64})\n$/.exec(messages[0].stream ?? "")?.[1] : undefined;
      const imageId = messages.find((m) => m.aux?.ID)?.aux?.ID ?? quietId;
      resolve({ status, messages, body: text, text: stream, error, imageId, aborted });
    };
    const http = request(
      {
        socketPath,
        method: "POST",
        path: `/build${queryString(req.query)}`,
        headers: { "content-type": "application/x-tar", "content-length": body.length, ...req.headers },
      },
      (res) => {
        let pending = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
          if (res.statusCode !== 200) return;
          pending += chunk.toString();
          const lines = pending.split("\n");
          pending = lines.pop() ?? "";
          for (const line of lines.filter((l) => l.trim())) {
            const m = JSON.parse(line) as BuildMessage;
            messages.push(m);
            if (!aborted && req.abortWhen?.(m)) {
              aborted = true;
              http.destroy();
              finish(res.statusCode ?? 0);
            }
          }
        });
        res.on("end", () => finish(res.statusCode ?? 0));
        res.on("error", (err) => (aborted ? undefined : reject(err)));
      },
    );
    http.setTimeout(req.timeoutMs ?? 120_000, () => http.destroy(new Error(`no answer to the build in ${req.timeoutMs ?? 120_000} ms`)));
    http.on("error", (err) => (aborted ? undefined : reject(err)));
    http.end(body);
  });
}

/** What a build left on a test daemon's side: entries of its build folders, and mounts under its folder. */
export interface Leftovers {
  tmpBuild: string[];
  pending: string[];
  execBuild: string[];
  mounts: string[];
}

const list = (dir: string): string[] => {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
};

/** For a daemon with its roots in `dir` (`<dir>/data`, `<dir>/exec`, as startEngined makes them). */
export function leftovers(dir: string): Leftovers {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && m.startsWith(`${dir}/`));
  return {
    tmpBuild: list(join(dir, "data", "tmp", "build")),
    pending: list(join(dir, "data", "builder", "pending")),
    execBuild: list(join(dir, "exec", "build")),
    mounts,
  };
}

export const NOTHING_LEFT: Leftovers = { tmpBuild: [], pending: [], execBuild: [], mounts: [] };

/**
 * What is left once the daemon has tidied up: a build's context folder goes just after its
 * answer ends (host/api/routes/build.ts), so this looks again for up to 30 s (every 100 ms)
 * before it says what stays.
 */
export async function settledLeftovers(dir: string): Promise<Leftovers> {
  let seen = leftovers(dir);
  for (let i = 0; i < 300 && JSON.stringify(seen) !== JSON.stringify(NOTHING_LEFT); i++) {
    await new Promise((r) => setTimeout(r, 100));
    seen = leftovers(dir);
  }
  return seen;
}

/** An HTTP server on a free port of 127.0.0.1: its base URL, and `close` (connections too). */
export async function serveOnLoopback(handler: RequestListener): Promise<{ base: string; close(): void }> {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}
