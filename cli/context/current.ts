/**
 * Which context a command talks to, decided as the Docker CLI decides it: `--context` first (also
 * over ENGINE_HOST); then `-H` or a non-empty ENGINE_HOST mean the "default" context; then
 * ENGINE_CONTEXT; then `currentContext` in config.json; else "default". `-H` together with
 * `--context` is refused before (engine.ts). This file is loaded by every command: it reads
 * config.json only when nothing before it decided, and the context store not at all.
 */
import { configString } from "../config-file.js";

/** The context that is not stored: where `-H`, ENGINE_HOST or the default socket point. */
export const DEFAULT_CONTEXT = "default";

export interface ContextChoice {
  /** `--context` / `-c`, "" when not given. */
  flag: string;
  /** Whether `-H` was given. */
  hostGiven: boolean;
  env: NodeJS.ProcessEnv;
  configDir: string;
}

export function chosenContext(c: ContextChoice): string {
  if (c.flag) return c.flag;
  if (c.hostGiven || c.env.ENGINE_HOST) return DEFAULT_CONTEXT;
  if (c.env.ENGINE_CONTEXT) return c.env.ENGINE_CONTEXT;
  // not checked here for existence: using a context that is not there fails where it is used
  return configString(c.configDir, "currentContext") || DEFAULT_CONTEXT;
}
