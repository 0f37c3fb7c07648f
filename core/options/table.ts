/**
 * The one option table of `engined`: every option of the spec, grouped by area in `table/`.
 * Flags (`daemon-args.ts`), `--help`, the configuration file's keys and types, defaults,
 * reload and the options `/info` reports all come from here; adding an option is one entry.
 */
import type { OptionDefinition } from "./option.js";
import { apiOptions } from "./table/api.js";
import { daemonOptions } from "./table/daemon.js";
import { networkOptions } from "./table/network.js";
import { registryOptions } from "./table/registry.js";
import { runtimeOptions } from "./table/runtime.js";

export const optionTable = {
  ...apiOptions,
  ...daemonOptions,
  ...runtimeOptions,
  ...networkOptions,
  ...registryOptions,
} as const;

export type OptionTable = typeof optionTable;
export type OptionName = keyof OptionTable;
type ValueOf<D> = D extends OptionDefinition<infer T> ? T : never;
/** The daemon's configuration: one typed value per option of the table. */
export type DaemonConfig = { -readonly [K in OptionName]: ValueOf<OptionTable[K]> };

export const optionNames = Object.keys(optionTable) as OptionName[];

export function definitionOf(name: OptionName): OptionDefinition<unknown> {
  return optionTable[name] as OptionDefinition<unknown>;
}

export type { OptionDefinition, OptionGroup, Platform } from "./option.js";
