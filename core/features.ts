/**
 * Features: named switches of the `features` map (`--feature name[=bool]`, or `"features"` in
 * the configuration file, never both), reloadable. A feature this engine knows has a default
 * and the platforms it is for; every other name is accepted and kept, as Docker's daemon does
 * (it validates no feature name), and means nothing here.
 *
 * Readers ask `featureEnabled(config, name)` at the moment they act, so that a reload (SIGHUP)
 * takes effect from the next container, pull or `/info` on.
 */
import type { DaemonConfig, Platform } from "./options/table.js";

export interface FeatureDefinition {
  /** The value when the operator gives none. */
  readonly default: boolean;
  /** Where the feature means something; elsewhere it is kept and means nothing, like an unknown name. */
  readonly platforms: readonly Platform[];
  /** Where the daemon refuses the feature whatever its value (see options/rules.ts), as Docker does. */
  readonly refusedOn?: readonly Platform[];
  /** What turning it on does here, for the README and `/info`. */
  readonly effect: string;
}

export const KNOWN_FEATURES = {
  cdi: {
    default: true,
    platforms: ["linux"],
    effect: "Container Device Interface: devices named by CDI specifications in cdi-spec-dirs; false turns CDI off",
  },
  "containerd-snapshotter": {
    default: false,
    platforms: ["linux", "win"],
    effect:
      "accepted and reported only: this engine has no containerd snapshotter, so images and containers stay in the storage driver",
  },
  "windows-dns-proxy": {
    default: false,
    platforms: ["win"],
    refusedOn: ["linux"],
    effect: "win platform only: the internal DNS resolver forwards to external servers",
  },
} as const satisfies Record<string, FeatureDefinition>;

export type KnownFeature = keyof typeof KNOWN_FEATURES;

function isKnown(name: string): name is KnownFeature {
  return Object.hasOwn(KNOWN_FEATURES, name);
}

/** Whether `name` is on: the operator's value, else the feature's default (off for a name this engine does not know). */
export function featureEnabled(config: Pick<DaemonConfig, "feature">, name: KnownFeature | (string & {})): boolean {
  const given = config.feature[name];
  if (given !== undefined) return given;
  return isKnown(name) ? KNOWN_FEATURES[name].default : false;
}

/**
 * The features in force: every known feature of this platform with its value (given or
 * default), then the names the operator gave that this engine does not know, as given.
 */
export function featuresInForce(config: Pick<DaemonConfig, "feature">, platform: Platform): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [name, def] of Object.entries(KNOWN_FEATURES)) {
    if ((def.platforms as readonly Platform[]).includes(platform)) out[name] = featureEnabled(config, name);
  }
  for (const [name, on] of Object.entries(config.feature)) if (!(name in out)) out[name] = on;
  return out;
}

/** Features given that this platform refuses (Docker's Linux daemon refuses `windows-dns-proxy`, on or off). */
export function featuresRefusedOn(config: Pick<DaemonConfig, "feature">, platform: Platform): KnownFeature[] {
  return Object.keys(config.feature).filter((name): name is KnownFeature => {
    const def: FeatureDefinition | undefined = isKnown(name) ? KNOWN_FEATURES[name] : undefined;
    return def?.refusedOn?.includes(platform) ?? false;
  });
}
