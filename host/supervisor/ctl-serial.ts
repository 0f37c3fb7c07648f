/**
 * Commands to one conmon `ctl` FIFO, one at a time and a moment apart: conmon 2.1.6 takes one
 * command per read, so two written back to back (the Docker CLI's resize to h+1 then h, which
 * makes a shell redraw; a resize and a log reopen) would lose the second.
 */
import { KeyedQueue } from "../../core/async/keyed-queue.js";

/** The commands under way, by FIFO. */
const queues = new KeyedQueue();

const GAP_MS = 25;

/** Runs `send` (a synchronous write to the FIFO) after the FIFO's earlier commands; rejects with its error. */
export function serialCtl(ctlPath: string, send: () => void): Promise<void> {
  return queues.run(ctlPath, async () => {
    send();
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  });
}
