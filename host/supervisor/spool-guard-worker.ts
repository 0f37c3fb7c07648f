/**
 * The spool guard's thread (see spool-guard.ts): looks at the size of each spool (every few
 * milliseconds while output comes) and stops or continues its conmon. The only place that
 * sends those signals, so a stop and a continue never cross.
 */
import { statSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { liveConmonPid } from "./conmon.js";
import {
  LOOK_COLD_MS,
  LOOK_HOT_MS,
  SPOOL_PAUSE_BYTES,
  SPOOL_RESUME_BYTES,
  SPOOL_SLACK_BYTES,
  type GuardNotice,
  type GuardRequest,
} from "./spool-guard.js";

interface Watched {
  live: string;
  rotated: string;
  conmonPidfile: string;
  /** Looked at often until then: it grew, or was continued, or the drain moved, lately. */
  hotUntil: number;
  lastTotal: number;
  paused: boolean;
  released: boolean;
  lookedAt: number;
  /**
   * After a continue for a caught-up drain: no stop below this size (the spool then still holds
   * the rotated file the drain has read; conmon must run to start the next one). Only until
   * conmon has started it: see look().
   */
  floor: number;
  /** Holds of attached clients that do not read: conmon stays stopped while there is one. */
  holds: number;
}

const spools = new Map<string, Watched>();
const HOT_FOR_MS = 1000;
let timer: NodeJS.Timeout | undefined;

// A file that is not there (the rotated one, most of the time) is no exception: this runs for
// every running container 10 times a second.
const stat = (path: string) => {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};
const size = (path: string) => stat(path)?.size ?? 0;

function signal(key: string, s: Watched, paused: boolean): void {
  const pid = liveConmonPid(s.conmonPidfile);
  try {
    if (pid !== undefined) process.kill(pid, paused ? "SIGSTOP" : "SIGCONT");
  } catch {
    // gone: nothing to stop or continue
  }
  const changed = s.paused !== paused;
  s.paused = paused && pid !== undefined;
  // Continued: output comes again at once.
  if (!s.paused) s.hotUntil = Date.now() + HOT_FOR_MS;
  if (changed) parentPort!.postMessage({ op: "paused", key, paused: s.paused } satisfies GuardNotice);
}

function look(): void {
  timer = undefined;
  const now = Date.now();
  let hot = false;
  for (const [key, s] of spools) {
    if (s.released) continue;
    const isHot = s.paused || now < s.hotUntil;
    hot ||= isHot;
    if (!isHot && now - s.lookedAt < LOOK_COLD_MS) continue;
    s.lookedAt = now;
    const live = stat(s.live);
    const rotated = stat(s.rotated);
    const total = (live?.size ?? 0) + (rotated?.size ?? 0);
    if (total !== s.lastTotal) s.hotUntil = now + HOT_FOR_MS;
    s.lastTotal = total;
    // The floor lets conmon run to start the next live file. Once it has (the rotated file and a
    // new live one side by side), the drain retires the rotated file without conmon: the floor
    // goes, else conmon filled the new file up to a floor above the bound (a rotated file of
    // 5.2 MiB made it 6.2, and the spool held 6.6 MiB of live and rotated files). Otherwise it
    // comes down with the size once the drain removes the rotated file it has read.
    s.floor = live && rotated ? 0 : Math.min(s.floor, total + SPOOL_SLACK_BYTES);
    if (!s.paused && total >= Math.max(SPOOL_PAUSE_BYTES, s.floor)) signal(key, s, true);
    else if (s.paused && s.holds === 0 && total < SPOOL_RESUME_BYTES) signal(key, s, false);
  }
  if (spools.size > 0) timer = setTimeout(look, hot ? LOOK_HOT_MS : LOOK_COLD_MS);
}

function lookSoon(): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(look, LOOK_HOT_MS);
}

parentPort!.on("message", (m: GuardRequest) => {
  const s = spools.get(m.key);
  switch (m.op) {
    case "watch": {
      const w: Watched = { live: m.live, rotated: m.rotated, conmonPidfile: m.conmonPidfile, hotUntil: 0, lastTotal: 0, paused: true, released: false, lookedAt: 0, floor: 0, holds: 0 };
      spools.set(m.key, w);
      signal(m.key, w, false);
      parentPort!.postMessage({ op: "watching", key: m.key } satisfies GuardNotice);
      lookSoon();
      break;
    }
    case "hot":
      if (s) s.hotUntil = Date.now() + HOT_FOR_MS;
      lookSoon();
      break;
    case "caughtUp":
      if (s?.paused && !s.released && s.holds === 0) {
        s.floor = size(s.live) + size(s.rotated) + SPOOL_SLACK_BYTES;
        signal(m.key, s, false);
      }
      break;
    case "hold":
      if (!s) break;
      s.holds = Math.max(0, s.holds + (m.held ? 1 : -1));
      if (s.released) break;
      if (s.holds > 0 && !s.paused) {
        signal(m.key, s, true);
      } else if (s.holds === 0 && s.paused) {
        // let go: on at once unless the spool itself is past its bound (then the drain's catching up continues it)
        const total = size(s.live) + size(s.rotated);
        if (total < SPOOL_PAUSE_BYTES) {
          s.floor = total + SPOOL_SLACK_BYTES;
          signal(m.key, s, false);
        }
      }
      lookSoon();
      break;
    case "release":
      if (s) {
        s.released = true;
        signal(m.key, s, false);
      }
      break;
    case "unwatch":
      if (s?.paused) signal(m.key, s, false);
      spools.delete(m.key);
      break;
  }
});
