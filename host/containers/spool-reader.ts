/**
 * Attach without the log driver: for a driver that cannot read back (`none`), the output an
 * attached client sees comes from conmon's spool, as Docker's attach copies the container's
 * streams whatever its log driver. Only what the container writes from the attach on is given
 * (a replay, `logs=1`, needs a driver that reads).
 *
 * The follower is registered with the supervisor before it opens a file (before the container
 * runs, for a container started after the attach), and says which spool file it reads: the
 * supervisor keeps the files it has not read yet, and has the container wait rather than
 * let them grow past the spool's bound (host/supervisor/spool-followers.ts). So a follower
 * whose event loop is late (engined busy, or stopped for a while) loses no line.
 */
import type { LogMessage, LogReader, ReadOptions } from "../../core/contracts/log.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { parseRFC3339Nano } from "../../core/rfc3339-nano.js";
import { followK8sLog } from "./k8s-log-follow.js";

/** Where the spool is, and when the container runs: the container service, or the runner. */
export interface SpoolSource {
  running(c: ContainerRecord, signal?: AbortSignal): Promise<void>;
  spoolPath(c: ContainerRecord): Promise<string>;
  /** Registers a follower of the spool with the supervisor; undefined when it cannot. */
  followSpool(c: ContainerRecord): Promise<{ report(ino: number): void; close(): void } | undefined>;
}

export function spoolReader(runner: SpoolSource, c: ContainerRecord): LogReader {
  const wasRunning = c.State.Running;
  return {
    async *read(opts: ReadOptions): AsyncGenerator<LogMessage> {
      const signal = opts.signal ?? new AbortController().signal;
      if (!opts.follow) return;
      const follower = await runner.followSpool(c);
      try {
        try {
          await runner.running(c, signal);
        } catch {
          return; // gone before the container ran
        }
        const path = await runner.spoolPath(c).catch(() => undefined);
        if (!path) return;
        // Running already: from now on (the live file's end). Started after the attach: its whole (new) spool.
        const from = wasRunning ? "end" : 0;
        for await (const l of followK8sLog(path, Promise.resolve(opts.producerDone), signal, 250, from, (ino) => follower?.report(ino))) {
          if (l.stream === "stdout" ? !opts.stdout : !opts.stderr) continue;
          const timeNs = parseRFC3339Nano(l.time) ?? BigInt(Date.now()) * 1_000_000n;
          yield { line: Buffer.from(l.line), stream: l.stream, time: new Date(Number(timeNs / 1_000_000n)), timeNs, partial: l.partial };
        }
      } finally {
        follower?.close();
      }
    },
  };
}
