/**
 * An attachment's live output: conmon's spool, as Docker's attach copies the container's
 * streams whatever its log driver, byte for byte (a driver may store text: json-file does).
 * Only what the container writes from the attach on is given (a replay, `logs=1`, is the log
 * driver's to give, when it reads).
 *
 * The follower is registered with the supervisor before it opens a file (before the container
 * runs, for a container started after the attach), and says which spool file it reads: the
 * supervisor keeps the files it has not read yet, and has the container wait rather than
 * let them grow past the spool's bound (host/supervisor/spool-followers.ts). So a follower
 * whose event loop is late (engined busy, or stopped for a while) loses no line.
 */
import type { LogMessage, LogReader, ReadOptions } from "../../core/contracts/log.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { followK8sLogBatches } from "./k8s-log-follow.js";
import { K8sTimes } from "../supervisor/k8s-file.js";
import { followedPipeReads, type PipeRead } from "./k8s-log-reads.js";

/** Where the spool is, and when the container runs: the container service, or the runner. */
export interface SpoolSource {
  running(c: ContainerRecord, signal?: AbortSignal): Promise<void>;
  spoolPath(c: ContainerRecord): Promise<string>;
  /** Registers a follower of the spool with the supervisor; undefined when it cannot. */
  followSpool(c: ContainerRecord): Promise<{ report(ino: number): void; close(): void } | undefined>;
}

/** A spool reader, and when its read stands at its place in the spool (or has ended). */
export interface SpoolReader extends LogReader {
  /** Settles once the read follows the spool (nothing written from then on is missed), or ended without. */
  positioned: Promise<void>;
}

export function spoolReader(runner: SpoolSource, c: ContainerRecord): SpoolReader {
  const wasRunning = c.State.Running;
  let positioned!: () => void;
  const atPlace = new Promise<void>((resolve) => (positioned = resolve));
  return {
    positioned: atPlace,
    async *read(opts: ReadOptions): AsyncGenerator<LogMessage> {
      const signal = opts.signal ?? new AbortController().signal;
      if (!opts.follow) return positioned();
      const follower = await runner.followSpool(c);
      let reads: AsyncGenerator<PipeRead> | undefined;
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
        const times = new K8sTimes();
        const batches = followK8sLogBatches(path, Promise.resolve(opts.producerDone), signal, 250, from, (ino) => follower?.report(ino));
        reads = followedPipeReads(batches, (stream) => (stream === "stdout" ? opts.stdout : opts.stderr));
        // The first step opens the file at `from` before it awaits anything (an async generator
        // runs to its first await at once): the reader is at its place as soon as it is asked.
        const first = reads.next();
        positioned();
        for (let r = await first; !r.done; r = await reads.next()) {
          // (a message `partial`, so that nothing is added to the read's bytes)
          const { ns, date } = times.at(r.value.time);
          yield { line: r.value.data, stream: r.value.stream, time: date, timeNs: ns, partial: true };
        }
      } finally {
        positioned();
        // (stepped by hand: a reader that stops early closes the follow, its files and watch)
        await reads?.return(undefined);
        follower?.close();
      }
    },
  };
}
