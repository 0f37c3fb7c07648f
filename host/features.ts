/**
 * What the `features` map shows and says. Docker's `/info` has no features field: a feature
 * shows through what it changes, and so it does here: with `cdi` off, host/devices/ reports
 * `CDISpecDirs` empty (as the API documents) and refuses CDI requests; `containerd-snapshotter`, which this engine accepts
 * but cannot act on, adds a warning line. `EngineOptions.features` carries the map as given.
 * The CDI code itself asks `featureEnabled(config, "cdi")` (core/features.ts) when it acts.
 *
 * Nothing is applied on a reload: readers look at the configuration in force, so the next
 * `/info`, container or pull sees the new values. The reload is logged, feature by feature.
 */
import type { Logger } from "pino";
import { featureEnabled, featuresInForce, KNOWN_FEATURES } from "../core/features.js";
import type { EngineHooks } from "../core/hooks.js";
import type { DaemonConfig, Platform } from "../core/options/table.js";

export interface FeatureDeps {
  hooks: EngineHooks;
  config: () => DaemonConfig;
  platform: Platform;
  log: Logger;
}

export function tapFeatures({ hooks, config, platform, log }: FeatureDeps): void {
  // After the storage driver's tap, so that the warning can name the driver in use.
  hooks.processInfo.tap("features", (info) => {
    const now = config();
    const warnings = featureWarnings(now, info.Driver);
    return {
      ...info,
      Warnings: [...info.Warnings, ...warnings],
    };
  });
  hooks.start.tap("features", () => sayFeatures(config(), platform, log));
  hooks.reloaded.tap("features", (ctx) => {
    if (!ctx.changed.has("feature")) return;
    const before = featuresInForce(ctx.previous, platform);
    const after = featuresInForce(ctx.next, platform);
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (before[name] !== after[name]) log.info({ feature: name, before: before[name] ?? null, after: after[name] ?? null }, `feature ${name} is now ${after[name] ? "on" : "off"}`);
    }
    sayFeatures(ctx.next, platform, log);
  });
}

/** The `/info` warnings of the features in force. */
function featureWarnings(config: DaemonConfig, driver: string): string[] {
  if (!featureEnabled(config, "containerd-snapshotter")) return [];
  return [
    `WARNING: the containerd-snapshotter feature is on, but this engine has no containerd snapshotter: ` +
      `images and containers stay in the ${driver || "selected"} storage driver`,
  ];
}

/** Warns of a feature that cannot act here, and notes the names this engine does not know. */
function sayFeatures(config: DaemonConfig, platform: Platform, log: Logger): void {
  if (featureEnabled(config, "containerd-snapshotter")) {
    log.warn({ feature: "containerd-snapshotter" }, `feature containerd-snapshotter: ${KNOWN_FEATURES["containerd-snapshotter"].effect}`);
  }
  for (const name of Object.keys(config.feature)) {
    if (!Object.hasOwn(KNOWN_FEATURES, name)) log.info({ feature: name }, "feature not known to this engine: kept, and it changes nothing");
    else if (!(KNOWN_FEATURES[name as keyof typeof KNOWN_FEATURES].platforms as readonly Platform[]).includes(platform)) {
      log.info({ feature: name, platform }, "feature not for this platform: kept, and it changes nothing");
    }
  }
}
