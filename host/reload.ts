/**
 * SIGHUP: read the configuration again and apply what may change while the daemon runs.
 * A configuration that fails to load (a conflict with a flag, a parse error, a bad value,
 * a broken rule) changes nothing and is logged; the daemon keeps serving. Options that
 * changed but are not reloadable are logged as needing a restart.
 */
import type { Logger } from "pino";
import type { EngineHooks } from "../core/hooks.js";
import { loadConfig } from "../core/options/load-config.js";
import type { RuleHost } from "../core/options/rules.js";
import { definitionOf, type DaemonConfig, type OptionName } from "../core/options/table.js";
import { applyReloadable, diffConfig, type ReloadContext } from "../core/reload.js";
import { shownValue } from "../core/options/mask-credentials.js";
import { configForLog } from "./config-report.js";

export interface ReloadDeps {
  flags: ReadonlyMap<OptionName, readonly string[]>;
  env: NodeJS.ProcessEnv;
  host: RuleHost;
  hooks: EngineHooks;
  log: Logger;
  current(): DaemonConfig;
  commit(next: DaemonConfig): void;
}

export type ReloadOutcome = "applied" | "unchanged" | "failed";

export async function reloadDaemon(deps: ReloadDeps): Promise<ReloadOutcome> {
  const { log } = deps;
  let loaded;
  try {
    loaded = loadConfig(deps.flags, deps.env, deps.host);
  } catch (err) {
    log.error({ err: (err as Error).message }, "reload failed: the configuration is unchanged");
    return "failed";
  }
  const previous = deps.current();
  const diff = diffConfig(previous, loaded.config);
  for (const name of diff.needRestart) {
    log.warn({ option: definitionOf(name).key ?? name }, "option changed in the configuration file; it takes effect after a restart");
  }
  if (diff.reloadable.length === 0) {
    log.info("reload: no reloadable option changed");
    logReloaded(log, previous);
    return "unchanged";
  }
  const next = applyReloadable(previous, loaded.config, diff.reloadable);
  const undo: (() => Promise<void> | void)[] = [];
  const ctx: ReloadContext = {
    previous,
    next,
    changed: new Set(diff.reloadable),
    onRollback: (fn) => void undo.push(fn),
  };
  try {
    await deps.hooks.reload.promise(ctx);
  } catch (err) {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch (undoErr) {
        log.error({ err: (undoErr as Error).message }, "reload: taking back a change failed");
      }
    }
    log.error({ err: (err as Error).message }, "reload failed while applying; every change was taken back");
    return "failed";
  }
  deps.commit(next);
  for (const name of diff.reloadable) {
    const def = definitionOf(name);
    const show = (c: DaemonConfig) => JSON.stringify(shownValue(def, c[name]));
    log.info({ option: def.key }, `reloaded ${def.key}: ${show(previous)} -> ${show(next)}`);
  }
  logReloaded(log, next);
  deps.hooks.reloaded.call(ctx);
  return "applied";
}

/** Docker's line after every reload that loaded: the configuration in force, credentials masked. */
function logReloaded(log: Logger, config: DaemonConfig): void {
  log.info(`Reloaded configuration: ${JSON.stringify(configForLog(config))}`);
}
