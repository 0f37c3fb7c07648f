/**
 * The data root (persistent state) and the exec root (state that dies with the host), created
 * with safe permissions. The data root and its `tmp` may be symlinks: they are resolved once
 * here and used resolved, so that every later path is the real one. `ENGINE_TMPDIR` moves
 * temporary files elsewhere.
 */
import { chmodSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { UsernsRemap } from "./userns/remap.js";
import { remappedDataRoot, remappedExecRoot } from "./userns/remapped-roots.js";

export interface Roots {
  dataRoot: string;
  execRoot: string;
  tmpDir: string;
}

/** With `remap` (`--userns-remap`), the state goes to `<data-root>/<uid>.<gid>` (userns/remapped-roots.ts). */
export function prepareRoots(dataRoot: string, execRoot: string, env: NodeJS.ProcessEnv, remap?: UsernsRemap): Roots {
  const top = ensureDir(dataRoot, 0o711);
  const data = remap ? remappedDataRoot(top, remap) : top;
  const exec = ensureDir(execRoot, 0o700);
  if (remap) remappedExecRoot(exec, remap);
  const tmp = ensureDir(env.ENGINE_TMPDIR || join(data, "tmp"), 0o700);
  return { dataRoot: data, execRoot: exec, tmpDir: tmp };
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
