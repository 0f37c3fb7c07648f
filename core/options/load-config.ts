/**
 * The whole configuration of a start, a `--validate` or a reload: flags, then the file
 * (`--config-file`, default `/etc/engine/daemon.json`; a missing default file is fine, a
 * missing named one is not), then the environment and the defaults, then the rules.
 * The file is read as Docker 28 reads it: in the encoding its byte order mark names (UTF-8,
 * or the UTF-16 that Windows editors write), UTF-8 without one.
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
      text = decodeConfigFile(readFileSync(path));
    } catch (err) {
      throw errors.configInvalid(path, [`it cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
    }
    fileValues = parseConfigFile(text, path, host.platform);
    file = path;
  } else if (flags.has("config-file")) {
    throw errors.configFileMissing(path);
  }
  const resolved = resolveOptions(flags, env, fileValues, `file ${path}`);
  hostDefaults(resolved, host);
  checkRules(resolved.config, host);
  return { ...resolved, file };
}

function decodeConfigFile(bytes: Buffer): string {
  const encoding = bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be" : "utf-8";
  return new TextDecoder(encoding).decode(bytes); // (the mark itself is dropped)
}

/**
 * The defaults Docker's daemon takes from the host, for options neither a flag nor the file
 * set. The cgroup namespace mode is the table's `private` on a cgroup v2 host and `host` on a
 * cgroup v1 (or hybrid) one, where a container then sees its own cgroup path in
 * /proc/self/cgroup as tools written for Docker on such hosts read it.
 */
function hostDefaults(r: ResolvedOptions, host: RuleHost): void {
  const set = (name: OptionName) => r.given.has(name) || r.fromFile.has(name);
  if (!set("default-cgroupns-mode") && host.cgroupVersion === 1) r.config["default-cgroupns-mode"] = "host";
  // An empty seccomp profile is the default one, as Docker's daemon takes it (`--seccomp-profile=`
  // or `"seccomp-profile": ""`): its `/info` then says `profile=builtin`.
  if (r.config["seccomp-profile"] === "") r.config["seccomp-profile"] = "builtin";
}
