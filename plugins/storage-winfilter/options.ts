/**
 * winfilter's options: `size`, the size of the sandbox made for each container (default 20G),
 * given with `--storage-opt size=40G` for every container or `docker run --storage-opt size=40G`
 * for one. Sizes are read as Docker reads them (units.RAMInBytes: `20G`, `20GB`, `20GiB` and
 * `20g` are all 20 x 1024^3 bytes; a decimal number is allowed). These checks run on every
 * platform: on Linux they are what the tests can prove of this driver.
 */
import type { CreateOptions } from "../../core/contracts/storage.js";
import { driverSize, layerSize, layerSizeOption } from "../../core/storage/options.js";

export const DEFAULT_SANDBOX_SIZE = "20G";

export interface WinfilterOptions {
  /** Bytes of a container's sandbox unless the container asks for another size. */
  sandboxBytes: number;
}

/** The daemon's `--storage-opt` entries for winfilter (names already lower-cased). */
export function parseWinfilterOptions(options: Record<string, string>): WinfilterOptions {
  for (const key of Object.keys(options)) {
    if (key !== "size") throw new Error(`winfilter: unknown option ${key}`);
  }
  return { sandboxBytes: driverSize("winfilter", "size", options.size ?? DEFAULT_SANDBOX_SIZE) };
}

/** The sandbox size for one container: its own `size` storage option, else the daemon's. */
export function sandboxSizeFor(opts: CreateOptions, defaults: WinfilterOptions): number {
  const size = layerSizeOption("winfilter", opts);
  return size === undefined ? defaults.sandboxBytes : layerSize("winfilter", size);
}
