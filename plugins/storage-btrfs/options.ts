/**
 * The btrfs driver's options: the daemon's (`--storage-opt btrfs.min_space=10G`) and a
 * container's own (`docker create --storage-opt size=20G`). Sizes are read as `parseBytes`
 * reads them (binary units: `10G` is 10 GiB). Anything unknown is an error naming it; every
 * refusal of a container's options is a 400 from the catalogue, before anything is made.
 */
import { errors } from "../../core/errors.js";
import { parseBytes, showBytes } from "../../core/options/value-types-structured.js";

export const MIN_SPACE = "btrfs.min_space";

export interface BtrfsOptions {
  /** `btrfs.min_space`: the smallest `size` a container may ask for, bytes. */
  minSpace?: number;
}

function positiveBytes(value: string, invalid: (why: string) => Error): number {
  let bytes: number;
  try {
    bytes = parseBytes(value);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  if (!(bytes > 0)) throw invalid("must be larger than 0");
  return bytes;
}

/** The daemon's options for the driver (keys already lower case). */
export function parseDriverOptions(options: Record<string, string>): BtrfsOptions {
  const out: BtrfsOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (key !== MIN_SPACE) throw errors.storageDriverOptionUnknown("btrfs", key);
    out.minSpace = positiveBytes(value, (why) => errors.storageDriverOptionInvalid("btrfs", key, value, why));
  }
  return out;
}

/**
 * The quota a new layer gets, in bytes (undefined: none), from its `storageOpts`: only `size`
 * (any case), only on a writable layer, and not below `btrfs.min_space`.
 */
export function layerQuota(driver: BtrfsOptions, id: string, writable: boolean, storageOpts: Record<string, string> = {}): number | undefined {
  let size: string | undefined;
  for (const [key, value] of Object.entries(storageOpts)) {
    if (key.toLowerCase() !== "size") throw errors.storageLayerOptionUnknown("btrfs", key);
    size = value;
  }
  if (size === undefined) return undefined;
  if (!writable) throw errors.storageLayerSizeUnsupported("btrfs", `applies to writable layers only (layer ${id})`);
  const bytes = positiveBytes(size, (why) => errors.storageLayerSizeInvalid("btrfs", size, why));
  if (driver.minSpace !== undefined && bytes < driver.minSpace) {
    throw errors.storageLayerSizeBelowMinimum(showBytes(bytes), showBytes(driver.minSpace));
  }
  return bytes;
}
