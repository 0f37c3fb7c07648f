/**
 * The data root (persistent state) and the exec root (state that dies with the host), created
 * with safe permissions. The data root and its `tmp` may be symlinks: they are resolved once
 * here and used resolved, so that every later path is the real one. The `tmpdir` option
 * (`ENGINE_TMPDIR`) moves temporary files elsewhere.
 */
import { chmodSync, chownSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { PASS_DIR, PRIVATE_DIR } from "../core/state-modes.js";
import type { UsernsRemap } from "./userns/remap.js";
import { remappedDataRoot, remappedExecRoot } from "./userns/remapped-roots.js";

export interface Roots {
  dataRoot: string;
  execRoot: string;
  tmpDir: string;
}

/**
 * `tmpDir`: the `tmpdir` option, empty for `<data-root>/tmp`. With `remap` (`--userns-remap`),
 * the state goes to `<data-root>/<uid>.<gid>` (userns/remapped-roots.ts).
 */
export function prepareRoots(dataRoot: string, execRoot: string, tmpDir: string, remap?: UsernsRemap): Roots {
  const top = ensureDir(dataRoot, PASS_DIR);
  ownDataRoot(top, remap);
  const data = remap ? remappedDataRoot(top, remap) : top;
  const exec = ensureDir(execRoot, PRIVATE_DIR);
  if (remap) remappedExecRoot(exec, remap);
  const tmp = ensureDir(tmpDir || join(data, "tmp"), PRIVATE_DIR);
  return { dataRoot: data, execRoot: exec, tmpDir: tmp };
}

/**
 * The data root is the daemon's whatever made it, as Docker has it at every start: the daemon's
 * user's, 0710, with the remapped root's group under a remap (it passes through to its own
 * state, one level down) and the daemon's group otherwise: nobody else lists it or passes
 * through (an older engined left it 0711).
 */
function ownDataRoot(path: string, remap?: UsernsRemap): void {
  const uid = process.getuid?.() ?? 0;
  const gid = remap ? remap.root.gid : (process.getgid?.() ?? 0);
  const st = statSync(path);
  if (st.uid !== uid || st.gid !== gid) chownSync(path, uid, gid);
  if ((st.mode & 0o7777) !== PASS_DIR) chmodSync(path, PASS_DIR);
}

/** Creates the directory (or the one its symlink points to) and returns its real path. */
function ensureDir(path: string, mode: number): string {
  const created = mkdirSync(path, { recursive: true, mode });
  const real = realpathSync(path);
  // mkdir honours the umask: give what we created its mode. A directory the operator made
  // (or a symlink's target) keeps the mode it has.
  if (created !== undefined) chmodSync(real, mode);
  return real;
}
