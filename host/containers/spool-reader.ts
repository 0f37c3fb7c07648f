/**
 * Attach without the log driver: for a driver that cannot read back (`none`), the output an
 * attached client sees comes from conmon's spool, as Docker's attach copies the container's
 * streams whatever its log driver. Only what the container writes from the attach on is given
 * (a replay, `logs=1`, needs a driver that reads).
 */
import { open } from "node:fs/promises";
import type { LogMessage, LogReader, ReadOptions } from "../../core/contracts/log.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { parseRFC3339Nano } from "../../core/rfc3339-nano.js";
import { followK8sLog } from "./k8s-log-follow.js";

/** Where the spool is, and when the container runs: the container service, or the runner. */
export interface SpoolSource {
  running(c: ContainerRecord, signal?: AbortSignal): Promise<void>;
  spoolPath(c: ContainerRecord): Promise<string>;
}

async function sizeOf(path: string): Promise<number> {
  const fh = await open(path, "r").catch(() => undefined);
  if (!fh) return 0;
  try {
    // Only up to the last complete line: conmon writes whole lines, so this is the size.
    return (await fh.stat()).size;
  } finally {
    await fh.close();
  }
}

export function spoolReader(runner: SpoolSource, c: ContainerRecord): LogReader {
  const wasRunning = c.State.Running;
  return {
    async *read(opts: ReadOptions): AsyncGenerator<LogMessage> {
      const signal = opts.signal ?? new AbortController().signal;
      if (!opts.follow) return;
      try {
        await runner.running(c, signal);
      } catch {
        return; // gone before the container ran
      }
      const path = await runner.spoolPath(c).catch(() => undefined);
      if (!path) return;
      // Running already: from now on. Started after the attach: its whole (new) spool.
      const from = wasRunning ? await sizeOf(path) : 0;
      for await (const l of followK8sLog(path, Promise.resolve(opts.producerDone), signal, 250, from)) {
        if (l.stream === "stdout" ? !opts.stdout : !opts.stderr) continue;
        const timeNs = parseRFC3339Nano(l.time) ?? BigInt(Date.now()) * 1_000_000n;
        yield { line: Buffer.from(l.line), stream: l.stream, time: new Date(Number(timeNs / 1_000_000n)), timeNs, partial: l.partial };
      }
    },
  };
}
