/**
 * Follows a k8s-file log as conmon writes it (an exec session's output): every entry from the
 * start of the file, as it comes, until the writer is done and the file is read to its end.
 * Changes are noticed by inotify, with a poll besides (events can be coalesced or missed).
 */
import { watch, type FSWatcher } from "node:fs";
import { open } from "node:fs/promises";
import { dirname } from "node:path";
import { K8S_LINE, type K8sLogLine } from "../supervisor/conmon.js";

/** `offset`: where to begin (a byte offset at a line's start); the start of the file by default. */
export async function* followK8sLog(path: string, writerDone: Promise<unknown>, signal: AbortSignal, pollMs = 250, offset = 0): AsyncGenerator<K8sLogLine> {
  let done = false;
  let wake: () => void = () => {};
  const finish = () => {
    done = true;
    wake();
  };
  void writerDone.then(finish, finish);
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, () => wake());
    watcher.on("error", () => {});
  } catch {
    // polling alone
  }
  const onAbort = () => wake();
  signal.addEventListener("abort", onAbort);
  let rest = "";
  try {
    for (;;) {
      // Read before looking at `done`: after the writer is done one last read takes what is left.
      const finished = done;
      const chunk = await readFrom(path, offset);
      offset += chunk.length;
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop()!;
      for (const l of lines) {
        const m = K8S_LINE.exec(l);
        if (m) yield { time: m[1], stream: m[2] as "stdout" | "stderr", partial: m[3] === "P", line: m[4] };
      }
      if (signal.aborted || (finished && chunk.length === 0)) return;
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
  }
}

async function readFrom(path: string, offset: number): Promise<Buffer> {
  let file;
  try {
    file = await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return Buffer.alloc(0);
    throw err;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await file.read(buf, 0, buf.length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}
