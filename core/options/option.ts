/**
 * What one option of the table is. The table (`table.ts`) lists them all; everything about
 * options (flags, `daemon.json` keys, defaults, `--help`, reload, `/info`) is read from it.
 */
import type { ValueType } from "./value-types.js";

export type Platform = "linux" | "win";
export const LINUX: readonly Platform[] = ["linux"];
export const BOTH: readonly Platform[] = ["linux", "win"];

export type OptionGroup =
  | "api" | "tls" | "daemon" | "logging" | "runtime" | "storage" | "security" | "network" | "registry" | "cluster";

export interface OptionDefinition<T> {
  /** Long flag without dashes (`log-level`); absent for options set only in the file (`builder`). */
  readonly flag?: string;
  readonly short?: string;
  /**
   * The `daemon.json` key: the flag's name, or its plural for repeatable flags (`labels`);
   * dotted for a member of an object (`proxies.http-proxy`); null when the option is only a flag.
   */
  readonly key: string | null;
  /** Older keys still read, never written (`host-gateway-ip` beside `host-gateway-ips`). */
  readonly legacyKeys?: readonly string[];
  readonly type: ValueType<T>;
  /** The value when nothing sets it; a function when it depends on the environment. */
  readonly default: NoInfer<T> | ((env: NodeJS.ProcessEnv) => NoInfer<T>);
  /** Where the option exists; a key of the other platform's daemon is refused. */
  readonly platforms: readonly Platform[];
  /** Keys that exist on fewer platforms than the option (the win platform reads only the legacy key). */
  readonly keyPlatforms?: Readonly<Record<string, readonly Platform[]>>;
  readonly group: OptionGroup;
  readonly help: string;
  /** Name of the value in `--help` (`--data-root string`). */
  readonly metavar?: string;
  /** A reload (SIGHUP) may change it. */
  readonly reloadable?: boolean;
  /** Environment variables that set it when neither flag nor file does, the first set wins. */
  readonly env?: string | readonly string[];
  /** Parsed and acted on, never configuration (`--help`, `--version`, `--validate`, `--config-file`). */
  readonly action?: boolean;
  /** A URL that may hold credentials: they are masked (`xxxxx:xxxxx`) in logs, messages and `/info`. */
  readonly secret?: boolean;
  /** An example: the flag words and the value they give (for file-only options, the file value). */
  readonly example: { readonly args?: readonly string[]; readonly file?: unknown; readonly value: NoInfer<T> };
}

export function option<T>(def: OptionDefinition<T>): OptionDefinition<T> {
  return def;
}

/** The platforms where a file key of this option is read. */
export function platformsOfKey(def: OptionDefinition<unknown>, key: string): readonly Platform[] {
  return def.keyPlatforms?.[key] ?? def.platforms;
}
