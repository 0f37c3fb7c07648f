/**
 * Follows a k8s-file log as conmon writes it (a container's spool, an exec session's output):
 * every entry from the start (or from `offset`), as it comes, until the writer is done and the
 * file is read to its end. Changes are noticed by inotify, with a poll besides (events can be
 * coalesced or missed).
 *
 * A container's spool is rotated by the supervisor (host/supervisor/spool.ts): the live file is
 * renamed to `<path>.1` and conmon starts a new one. The follower holds its file and the newer
 * ones open (spool-files.ts); at the end of its file, once a newer one is held, it reads its own
 * to the end once more (conmon closed it before making the newer one) and goes on with the
 * newer from its start.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { parseK8sEntry, type K8sLogLine } from "../supervisor/k8s-file.js";
import { SpoolFiles } from "./spool-files.js";

/**
 * `from`: where to begin in the live file (a byte offset at a line's start, or its end as it is
 * when opened); 0: the whole spool. `onFile`: told the inode of each file as the follower
 * begins to read it (it has read the ones before).
 */
export async function* followK8sLog(path: string, writerDone: Promise<unknown>, signal: AbortSignal, pollMs = 250, from: number | "end" = 0, onFile?: (ino: number) => void): AsyncGenerator<K8sLogLine> {
  for await (const batch of followK8sLogBatches(path, writerDone, signal, pollMs, from, onFile)) yield* batch;
}

/**
 * The same, the entries of each read of the file together: a reader that passes output on (an
 * attachment) takes a read's thousands of short lines at once rather than one by one.
 */
export async function* followK8sLogBatches(path: string, writerDone: Promise<unknown>, signal: AbortSignal, pollMs = 250, from: number | "end" = 0, onFile?: (ino: number) => void): AsyncGenerator<K8sLogLine[]> {
  let done = false;
  let wake: () => void = () => {};
  const finish = () => {
    done = true;
    wake();
  };
  void writerDone.then(finish, finish);
  const files = new SpoolFiles(path, onFile);
  let watcher: FSWatcher | undefined;
  try {
    // Newer files are taken as they come, even while the reader of this generator is slow.
    const name = basename(path);
    watcher = watch(dirname(path), { persistent: false }, (event, changed) => {
      if (changed && !changed.startsWith(name)) return;
      // A file made, renamed or removed ("rename"); conmon's writes ("change") only wake.
      if (event === "rename") {
        try {
          files.lookForNewer();
        } catch {
          // the loop's next look says it
        }
      }
      wake();
    });
    watcher.on("error", () => {});
  } catch {
    // polling alone
  }
  const onAbort = () => wake();
  signal.addEventListener("abort", onAbort);
  // the bytes of a line not ended yet (a read may stop anywhere, in a UTF-8 sequence too)
  let rest = Buffer.alloc(0);
  try {
    let offset = files.open(from);
    for (;;) {
      // Read before looking at `done`: after the writer is done one last read takes what is left.
      const finished = done;
      if (!files.current) files.lookForNewer();
      const file = files.current;
      let chunk = files.read(offset);
      let sawAll = true;
      if (file && chunk.length === 0) {
        sawAll = files.lookForNewer();
        if (files.hasNewer()) {
          // Ours is complete now that a newer one exists: its last bytes, then the newer file.
          chunk = files.read(offset);
          if (chunk.length === 0) {
            files.next();
            offset = 0;
            rest = Buffer.alloc(0);
            continue;
          }
        }
      }
      offset += chunk.length;
      const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      const batch: K8sLogLine[] = [];
      let start = 0;
      for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
        const entry = parseK8sEntry(data.subarray(start, nl));
        start = nl + 1;
        if (entry) batch.push(entry);
      }
      if (batch.length > 0) yield batch;
      // (a copy: the read buffer may be reused)
      rest = Buffer.from(data.subarray(start));
      if (signal.aborted || (finished && chunk.length === 0 && sawAll)) return;
      // Reads are synchronous: let the folder's events in (they hold the newer files) between two.
      if (chunk.length > 0) await new Promise((resolve) => setImmediate(resolve));
      if (chunk.length === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
          if (done || signal.aborted) wake();
        });
      }
    }
  } finally {
    watcher?.close();
    signal.removeEventListener("abort", onAbort);
    files.close();
  }
}
