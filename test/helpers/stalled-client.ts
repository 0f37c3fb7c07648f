/**
 * A client of engined's API that stops reading: an HTTP request over the unix socket whose
 * answer is left unread (paused: Node's client then stops reading the socket, so the daemon's
 * writes pile up on its side), later read to its end. Also what the back-pressure tests measure
 * of the daemon: its resident memory and its open descriptors, from /proc.
 */
import { readdirSync, readFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { rssKiB } from "./numbered-lines.js";

export interface StalledAnswer {
  status: number;
  res: IncomingMessage;
  /** Reads on from here until the answer ends (or `timeoutMs` passes): every byte, through `onData`. */
  readAll(onData: (chunk: Buffer) => void, timeoutMs: number): Promise<void>;
  /** Goes away without reading. */
  destroy(): void;
}

/** Sends the request and leaves its answer unread once the status line has come. */
export function stalledRequest(socketPath: string, method: string, path: string, body?: unknown): Promise<StalledAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request({ socketPath, method, path, headers: payload ? { "content-type": "application/json", "content-length": payload.length } : {} }, (res) => {
      res.pause();
      resolve({
        status: res.statusCode ?? 0,
        res,
        readAll: (onData, timeoutMs) =>
          new Promise<void>((done, fail) => {
            const timer = setTimeout(() => {
              res.destroy();
              fail(new Error(`the answer did not end within ${timeoutMs} ms`));
            }, timeoutMs);
            res.on("data", onData);
            res.once("end", () => {
              clearTimeout(timer);
              done();
            });
            res.once("error", (err) => {
              clearTimeout(timer);
              fail(err);
            });
            res.resume();
          }),
        destroy: () => req.destroy(),
      });
    });
    req.once("error", reject);
    req.end(payload);
  });
}

/** A hijacked stream as Docker's clients take it (`Upgrade: tcp`): the connection, for stdin and output. */
export function upgradedRequest(socketPath: string, path: string, body?: unknown): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body === undefined ? "" : JSON.stringify(body));
    const req = request({
      socketPath,
      method: "POST",
      path,
      headers: { connection: "Upgrade", upgrade: "tcp", "content-type": "application/json", "content-length": payload.length },
    });
    req.once("upgrade", (_res, socket: Socket, head: Buffer) => {
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.once("response", (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.once("error", reject);
    req.end(payload);
  });
}

/**
 * Docker's multiplexed stream, taken apart: the stdout bytes counted and cut into lines (a
 * frame may hold a piece of a line: conmon cuts long output at its reads).
 */
export class FrameReader {
  stdoutBytes = 0;
  stderrBytes = 0;
  private pending: Buffer = Buffer.alloc(0);
  private rest = "";

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const payload = this.pending.subarray(8, 8 + size);
      if (this.pending[0] === 1) {
        this.stdoutBytes += size;
        this.text(payload.toString("latin1"));
      } else {
        this.stderrBytes += size;
      }
      this.pending = this.pending.subarray(8 + size);
    }
  }

  private text(s: string): void {
    const parts = (this.rest + s).split("\n");
    this.rest = parts.pop()!;
    for (const line of parts) this.onLine(line);
  }
}

/** Samples a process's RSS every 100 ms; `stop()` says the highest seen, in MiB. */
export function sampleRss(pid: number): { stop(): number; now(): number } {
  let max = rssKiB(pid);
  const timer = setInterval(() => (max = Math.max(max, rssKiB(pid))), 100);
  return {
    now: () => Math.round(rssKiB(pid) / 1024),
    stop() {
      clearInterval(timer);
      max = Math.max(max, rssKiB(pid));
      return Math.round(max / 1024);
    },
  };
}

/** The daemon's pid (from its pid file: bin/engined execs node, but the child handle may be a wrapper). */
export function daemonPid(pidfile: string): number {
  return Number(readFileSync(pidfile, "utf8").trim());
}

/** How many descriptors a process has open. */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** Waits (up to `timeoutMs`) for `check` to hold, looking every 100 ms; whether it did. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
