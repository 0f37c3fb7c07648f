/**
 * A process's output as Docker's attach and exec streams send it: one frame per read of the
 * process's pipe (Docker copies the pipe to the client read by read), not one per line. Conmon
 * stores what it reads as lines, each with the time of the read it came from: lines that follow
 * each other with the same time and stream were one read, and go out together again.
 */

/** Lines of one read of one stream: `sameRead` says whether `next` continues `last`'s read. */
export async function* outputReads<T>(lines: AsyncIterable<T>, sameRead: (last: T, next: T) => boolean): AsyncGenerator<T[]> {
  const it = lines[Symbol.asyncIterator]();
  let group: T[] = [];
  let pending: Promise<IteratorResult<T>> | undefined;
  try {
    for (;;) {
      const next = pending ?? it.next();
      pending = undefined;
      // The lines of one read come together (a follower yields them one after another, with no
      // wait between): a next line not there at once belongs to a later read, and the read
      // so far goes out now rather than when the process writes again.
      const r = group.length === 0 ? await next : await Promise.race([next, idle()]);
      if (r === IDLE) {
        yield group;
        group = [];
        pending = next;
        continue;
      }
      if (r.done) {
        if (group.length > 0) yield group;
        return;
      }
      if (group.length > 0 && !sameRead(group[group.length - 1], r.value)) {
        yield group;
        group = [];
      }
      group.push(r.value);
    }
  } finally {
    // not awaited: a follower waiting for output ends when its signal says so
    pending?.catch(() => {});
    void it.return?.()?.catch(() => {});
  }
}

const IDLE = Symbol("idle");

function idle(): Promise<typeof IDLE> {
  return new Promise((resolve) => setImmediate(() => resolve(IDLE)));
}
