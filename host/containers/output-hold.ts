/**
 * Docker's attach back-pressure. In Docker's daemon every attached client gets a pipe of about
 * 1 MB on the container's output broadcaster, and a pipe that is full blocks the broadcaster's
 * writes (moby: container/stream/streams.go, pkg/ioutils/bytespipe.go, pkg/broadcaster): while
 * an attached client does not read, the container blocks on its stdout, and its log driver gets
 * nothing more either. `docker logs -f` never does that (it reads the log file).
 *
 * Here the output goes through conmon's spool and the log driver, and an attached client reads
 * the log as `docker logs -f` would; so that attach keeps Docker's rule, a client whose stream
 * has stayed full for a while holds the container's output through the supervisor (its conmon
 * waits, as for a full spool) until the client reads again or goes away. The hold is a
 * connection to the supervisor: engined's end (a crash too) ends it.
 */
import type { ContainerRecord } from "../../core/containers/container-store.js";

export interface OutputHolder {
  holdOutput(c: ContainerRecord, signal: AbortSignal): Promise<void>;
}

/** `set(true)` holds the container's output (once), `set(false)` lets it go. */
export function outputHold(holder: OutputHolder, c: ContainerRecord): { set: (stalled: boolean) => void } {
  let current: AbortController | undefined;
  return {
    set: (stalled: boolean) => {
      if (stalled && !current) {
        const hold = new AbortController();
        current = hold;
        // not running (any more), or the supervisor unreachable: nothing to hold; the next stall asks again
        holder.holdOutput(c, hold.signal).catch(() => {
          if (current === hold) current = undefined;
        });
      } else if (!stalled && current) {
        current.abort();
        current = undefined;
      }
    },
  };
}
