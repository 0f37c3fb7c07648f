/**
 * The one-time fix of a data root an older engined wrote with looser modes: its image blobs,
 * layer tars and records 0644 in 0755 folders (readable by any local user), its containers'
 * folders and network/ 0755. They get the modes a new data root has (core/state-modes.ts).
 *
 * The stamp `<data-root>/modes-version` says the fix was done: a start that finds it walks
 * nothing, so a large store costs its walk once. A start stopped halfway leaves no stamp and the
 * next one walks again (a chmod is idempotent). The data root itself is set at every start
 * (host/roots.ts), as Docker does.
 */
import { chmodSync, chownSync, lstatSync, readdirSync, readFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../core/images/atomic-file.js";
import { PASS_DIR, PRIVATE_DIR, PRIVATE_FILE } from "../core/state-modes.js";

/** Raised when what a new engined keeps private changes again: the walk then runs once more. */
const MODES_VERSION = 1;
const MODES_STAMP = "modes-version";

export interface ModesUpgrade {
  /** Files and folders looked at. */
  seen: number;
  /** Of those, how many had their mode (or group) changed. */
  changed: number;
}

/**
 * Tightens what an older engined left in `dataRoot` (the remapped one under `--userns-remap`,
 * whose root's group `passGid` passes through the containers' folders); undefined when the
 * stamp says it was done already.
 */
export function upgradeStateModes(dataRoot: string, passGid?: number): ModesUpgrade | undefined {
  const stamp = join(dataRoot, MODES_STAMP);
  if (readStamp(stamp) >= MODES_VERSION) return undefined;
  const count: ModesUpgrade = { seen: 0, changed: 0 };
  const set = (path: string, st: Stats, mode: number, gid?: number) => {
    count.seen++;
    let changed = false;
    if (gid !== undefined && st.gid !== gid) {
      chownSync(path, st.uid, gid);
      changed = true;
    }
    if ((st.mode & 0o7777) !== mode) {
      chmodSync(path, mode);
      changed = true;
    }
    if (changed) count.changed++;
  };

  // image/: every folder and file below it, blobs, layer tars and layouts, records
  const walk = (path: string, st: Stats) => {
    if (st.isDirectory()) {
      set(path, st, PRIVATE_DIR);
      for (const name of readdirSync(path)) {
        const child = join(path, name);
        walk(child, lstatSync(child));
      }
    } else if (st.isFile()) {
      set(path, st, PRIVATE_FILE);
    }
  };
  const image = statOrUndefined(join(dataRoot, "image"));
  if (image) walk(join(dataRoot, "image"), image);

  // containers/<id>/: 0710 (what is inside has its own modes: the network files a container
  // reads stay 0644, its log 0640, its record 0600)
  const containers = join(dataRoot, "containers");
  const top = statOrUndefined(containers);
  if (top?.isDirectory()) {
    set(containers, top, PASS_DIR, passGid);
    for (const id of readdirSync(containers)) {
      const st = lstatSync(join(containers, id));
      if (st.isDirectory()) set(join(containers, id), st, PASS_DIR, passGid);
    }
  }

  // network/: the networks' records
  const network = statOrUndefined(join(dataRoot, "network"));
  if (network?.isDirectory()) set(join(dataRoot, "network"), network, PRIVATE_DIR);

  writeFileAtomic(stamp, `${MODES_VERSION}\n`);
  return count;
}

function readStamp(path: string): number {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isInteger(n) ? n : 0;
  } catch {
    return 0;
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
