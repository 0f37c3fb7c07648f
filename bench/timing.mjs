// Timing for the container benches: a monotonic clock in ms, the median, and timed loops bounded
// by a count and a time limit that also end at Ctrl-C (the benches then clean up as usual).
export const now = () => Number(process.hrtime.bigint()) / 1e6;

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

let interrupted = false;
export const wasInterrupted = () => interrupted;

/** The first Ctrl-C only stops the loops, so that every daemon, container and folder is removed; a second exits at once. */
export function stopLoopsOnCtrlC() {
  process.on("SIGINT", () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error("interrupted: cleaning up (Ctrl-C again to leave everything as it is)");
  });
}

/** Whether a loop that began at `t0` may go on. */
export const going = (t0, limitMs) => !interrupted && now() - t0 < limitMs;

/** Runs `fn` up to `count` times one after the other, until `limitMs` is spent; the ms each run took. */
export async function timedRuns(count, limitMs, fn) {
  const times = [];
  const t0 = now();
  while (times.length < count && going(t0, limitMs)) {
    const s = now();
    await fn(times.length);
    times.push(now() - s);
  }
  return times;
}
