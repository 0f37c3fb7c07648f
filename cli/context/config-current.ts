/**
 * `currentContext` in config.json, set by `context use` and cleared by `context rm -f` of the
 * context in use. Written as the Docker CLI writes the file ("auths" first, the other keys kept);
 * "default" is stored as no key at all, as the CLI stores it.
 */
import { readConfig, writeConfig, type ConfigFile } from "../auth/config.js";
import { DEFAULT_CONTEXT } from "./current.js";

/** Sets the context `engine` uses from now on; `always`: write the file even when nothing changes (as `rm -f` does). */
export function saveCurrentContext(configDir: string, name: string, always = false): void {
  const config = readConfig(configDir);
  const value = name === DEFAULT_CONTEXT ? "" : name;
  if (!always && (config.currentContext ?? "") === value) return;
  const next: ConfigFile = { auths: {}, ...config };
  if (value) next.currentContext = value;
  else delete next.currentContext;
  writeConfig(configDir, next);
}
