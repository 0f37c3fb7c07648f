/**
 * The btrfs driver's options: the daemon's (`--storage-opt btrfs.min_space=10G`) and a
 * container's own (`docker create --storage-opt size=20G`). Sizes are read as `parseBytes`
 * reads them (binary units: `10G` is 10 GiB). The daemon's are declared in manifest.ts and read
 * by the host; every refusal of a container's options is a 400 from the catalogue, before
 * anything is made.
 */
import { errors } from "../../core/errors.js";
import type { PluginOptionValues } from "../../core/options/plugin-options.js";
import { showBytes } from "../../core/options/value-types-structured.js";
import { layerSize, layerSizeOption } from "../../core/storage/options.js";

const MIN_SPACE = "btrfs.min_space";

export interface BtrfsOptions {
  /** `btrfs.min_space`: the smallest `size` a container may ask for, bytes. */
  minSpace?: number;
}

/** The daemon's options for the driver, as the host read them by the manifest's types. */
export function driverOptionsOf(options: PluginOptionValues): BtrfsOptions {
  const minSpace = options[MIN_SPACE] as number | undefined;
  return minSpace === undefined ? {} : { minSpace };
}

/**
 * The quota a new layer gets, in bytes (undefined: none), from its `storageOpts`: only `size`
 * (any case), only on a writable layer, and not below `btrfs.min_space`.
 */
export function layerQuota(driver: BtrfsOptions, id: string, writable: boolean, storageOpts: Record<string, string> = {}): number | undefined {
  const size = layerSizeOption("btrfs", { storageOpts });
  if (size === undefined) return undefined;
  if (!writable) throw errors.storageLayerSizeUnsupported("btrfs", `applies to writable layers only (layer ${id})`);
  const bytes = layerSize("btrfs", size);
  if (driver.minSpace !== undefined && bytes < driver.minSpace) {
    throw errors.storageLayerSizeBelowMinimum(showBytes(bytes), showBytes(driver.minSpace));
  }
  return bytes;
}
