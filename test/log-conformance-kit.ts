/**
 * What the log conformance suite's parts share (log-conformance.ts, -read.ts, -resume.ts): a
 * container's logger context, numbered messages with known times, collecting what a reader gives.
 */
import { join } from "node:path";
import type { LoggerContext, LogMessage, LogMessageIn, LogStream, LogWriter } from "../core/contracts/log.js";
import { makeTempDir } from "./helpers/engined.js";

/** A context maker with the suite's base options under the given ones. */
export type ContextMaker = (options?: Record<string, string>, logDir?: string) => LoggerContext;

export const CONTAINER_ID = "0123456789abcdef".repeat(4);
export const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 123);

/** A container's logger context, its folder fresh unless `logDir` is given. */
export function loggerContext(options: Record<string, string> = {}, logDir?: string): LoggerContext {
  return {
    containerId: CONTAINER_ID,
    containerName: "/web",
    imageName: "busybox",
    imageId: "sha256:" + "fedcba9876543210".repeat(4),
    labels: {},
    env: [],
    logDir: logDir ?? join(makeTempDir("engine-logconf-"), "containers", CONTAINER_ID),
    options,
  };
}

/** Message `i`: its time `T0 + i` seconds, with nanoseconds past the millisecond. */
export const msg = (text: string, i = 0, stream: LogStream = "stdout", partial = false): LogMessageIn => ({
  line: Buffer.from(text),
  stream,
  time: new Date(T0 + i * 1000),
  timeNs: BigInt(T0 + i * 1000) * 1_000_000n + 456_789n,
  partial,
});

export const numbered = (i: number) => `line-${String(i).padStart(4, "0")} ${"x".repeat(30)}`;
/** The number in a `numbered` text. */
export const numberOf = (text: string) => Number(text.slice(5, 9));

export async function collect(it: AsyncIterable<LogMessage>): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  for await (const m of it) out.push(m);
  return out;
}

export const texts = (ms: LogMessage[]) => ms.map((m) => m.line.toString());

/** Writes messages `from`..`from + n - 1`, each awaited; every third on stderr. */
export async function writeNumbered(w: LogWriter, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) await w.write(msg(numbered(i), i, i % 3 === 0 ? "stderr" : "stdout"));
}

/** Resolves when `cond()` holds, polling; fails after `ms`. */
export async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting (${cond.toString()})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

