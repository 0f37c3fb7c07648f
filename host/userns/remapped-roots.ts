/**
 * The roots of a remapping daemon (Docker's setupDaemonRoot): the data root is root's with the
 * remapped root's group, 0710 (host/roots.ts), and the daemon's state goes one level down, in
 * `<data-root>/<uid>.<gid>` of the remapped root, root's with the remapped root's group, 0710.
 * Every folder above it must let the remapped root pass (o+x, or its owner or group), or
 * containers could not reach their root filesystems and mounts: the start fails naming the
 * folder. The exec root, where root filesystems are mounted, gets the same 0710 treatment.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { errors } from "../../core/errors.js";
import { PASS_DIR } from "../../core/state-modes.js";
import type { Owner } from "../../core/userns/id-map.js";
import { shareWithRemappedRoot, type UsernsRemap } from "./remap.js";

/** Makes `<dataRoot>/<uid>.<gid>` for the remapped root and returns it. */
export function remappedDataRoot(dataRoot: string, remap: UsernsRemap): string {
  const root = join(dataRoot, `${remap.root.uid}.${remap.root.gid}`);
  mkdirSync(root, { recursive: true, mode: PASS_DIR });
  shareWithRemappedRoot(remap, root);
  checkPassable(root, remap.root);
  return root;
}

/** Opens the exec root to the remapped root (root filesystems are mounted below it). */
export function remappedExecRoot(execRoot: string, remap: UsernsRemap): void {
  shareWithRemappedRoot(remap, execRoot);
  checkPassable(execRoot, remap.root);
}

/** Throws when a folder above `path` keeps `who` out. */
function checkPassable(path: string, who: Owner): void {
  for (let dir = dirname(path); dir !== "/" && dir !== "."; dir = dirname(dir)) {
    if (!canPass(dir, who)) throw errors.usernsRootAccess(path, dir);
  }
}

function canPass(dir: string, who: Owner): boolean {
  const st = statSync(dir);
  const perm = st.mode & 0o777;
  if (perm & 0o001) return true;
  if (st.uid === who.uid && perm & 0o100) return true;
  return st.gid === who.gid && (perm & 0o010) !== 0;
}
