/**
 * Reload, as plugins see it. On SIGHUP the daemon reads its configuration again; when it is
 * valid, the reloadable options that changed are applied as one transaction through the
 * `reload` hook: each tap applies the change of its area and registers how to take it back.
 * If a tap throws, every change already applied is taken back, newest first, and the daemon
 * keeps the configuration it had. Options that are not reloadable keep their old values
 * until a restart.
 */
import { isDeepStrictEqual } from "node:util";
import { definitionOf, optionNames, type DaemonConfig, type OptionName } from "./options/table.js";

export interface ReloadContext {
  readonly previous: Readonly<DaemonConfig>;
  /** The configuration that takes effect if every tap succeeds. */
  readonly next: Readonly<DaemonConfig>;
  /** The reloadable options whose values change. */
  readonly changed: ReadonlySet<OptionName>;
  /** Registers how to take back a change this tap applied. */
  onRollback(undo: () => Promise<void> | void): void;
}

export interface ConfigDiff {
  /** Reloadable options that changed: applied by the reload. */
  reloadable: OptionName[];
  /** Options that changed but need a restart: reported, not applied. */
  needRestart: OptionName[];
}

export function diffConfig(previous: DaemonConfig, next: DaemonConfig): ConfigDiff {
  const changed = optionNames.filter((n) => !definitionOf(n).action && !isDeepStrictEqual(previous[n], next[n]));
  return {
    reloadable: changed.filter((n) => definitionOf(n).reloadable),
    needRestart: changed.filter((n) => !definitionOf(n).reloadable),
  };
}

/** The configuration after a reload: the old one with only the reloadable changes taken. */
export function applyReloadable(previous: DaemonConfig, next: DaemonConfig, names: readonly OptionName[]): DaemonConfig {
  const out = { ...previous } as Record<OptionName, unknown>;
  for (const name of names) out[name] = structuredClone(next[name]);
  return out as DaemonConfig;
}
