/**
 * The whole configuration of a start, a `--validate` or a reload: flags, then the file
 * (`--config-file`, default `/etc/engine/daemon.json`; a missing default file is fine, a
 * missing named one is not), then the environment and the defaults, then the rules.
 */
import { existsSync, readFileSync } from "node:fs";
import { errors } from "../errors.js";
import { parseConfigFile } from "./config-file.js";
import { resolveOptions, type ResolvedOptions } from "./resolve.js";
import { checkRules, type RuleHost } from "./rules.js";
import type { OptionName } from "./table.js";

export interface LoadedConfig extends ResolvedOptions {
  /** The file read, or undefined when the default file does not exist. */
  file?: string;
}

export function loadConfig(
  flags: ReadonlyMap<OptionName, readonly string[]>,
  env: NodeJS.ProcessEnv,
  host: RuleHost,
): LoadedConfig {
  const base = resolveOptions(flags, env);
  const path = base.config["config-file"];
  let fileValues = new Map<OptionName, unknown>();
  let file: string | undefined;
  if (existsSync(path)) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw errors.configInvalid(path, [`it cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
    }
    fileValues = parseConfigFile(text, path, host.platform);
    file = path;
  } else if (flags.has("config-file")) {
    throw errors.configFileMissing(path);
  }
  const resolved = resolveOptions(flags, env, fileValues, `file ${path}`);
  checkRules(resolved.config, host);
  return { ...resolved, file };
}
