/**
 * Where a rootless daemon keeps its state by default (Docker's rule): a daemon started inside
 * RootlessKit (which sets ROOTLESSKIT_STATE_DIR) is rootless and uses the user's XDG folders
 * instead of the system's: data under `$XDG_DATA_HOME/engine` (`~/.local/share/engine`),
 * execution state, pid file and socket under `$XDG_RUNTIME_DIR`, the configuration file under
 * `$XDG_CONFIG_HOME/engine` (`~/.config/engine`). Flags and `daemon.json` still win.
 */
import { homedir } from "node:os";
import { join } from "node:path";

export const inRootlessKit = (env: NodeJS.ProcessEnv): boolean => Boolean(env.ROOTLESSKIT_STATE_DIR);

const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir();

/** `$XDG_RUNTIME_DIR`, else systemd's `/run/user/<uid>` (rootless.ts refuses a start without the variable). */
function runtimeDir(env: NodeJS.ProcessEnv): string {
  return env.XDG_RUNTIME_DIR || `/run/user/${process.getuid?.() ?? 0}`;
}

/** `normal`, or inside RootlessKit what `rootless(env)` says. */
export function rootlessOr(normal: string, rootless: (env: NodeJS.ProcessEnv) => string): (env: NodeJS.ProcessEnv) => string {
  return (env) => (inRootlessKit(env) ? rootless(env) : normal);
}

export const rootlessPaths = {
  dataRoot: (env: NodeJS.ProcessEnv) => join(env.XDG_DATA_HOME || join(home(env), ".local", "share"), "engine"),
  execRoot: (env: NodeJS.ProcessEnv) => join(runtimeDir(env), "engine"),
  pidfile: (env: NodeJS.ProcessEnv) => join(runtimeDir(env), "engine.pid"),
  socket: (env: NodeJS.ProcessEnv) => join(runtimeDir(env), "engine.sock"),
  configFile: (env: NodeJS.ProcessEnv) => join(env.XDG_CONFIG_HOME || join(home(env), ".config"), "engine", "daemon.json"),
};
