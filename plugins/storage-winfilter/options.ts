/**
 * winfilter's options: `size`, the size of the sandbox made for each container (default 20G),
 * given with `--storage-opt size=40G` for every container (declared in manifest.ts, read by the
 * host) or `docker run --storage-opt size=40G` for one. Sizes are read as Docker reads them
 * (units.RAMInBytes: `20G`, `20GB`, `20GiB` and `20g` are all 20 x 1024^3 bytes; a decimal
 * number is allowed). These checks run on every platform: on Linux they are what the tests can
 * prove of this driver.
 */
import type { CreateOptions } from "../../core/contracts/storage.js";
import type { PluginOptionValues } from "../../core/options/plugin-options.js";
import { layerSize, layerSizeOption } from "../../core/storage/options.js";

export interface WinfilterOptions {
  /** Bytes of a container's sandbox unless the container asks for another size. */
  sandboxBytes: number;
}

/** The daemon's `--storage-opt` entries for winfilter, as the host read them (`size`, default 20G: manifest.ts). */
export function winfilterOptionsOf(options: PluginOptionValues): WinfilterOptions {
  return { sandboxBytes: options.size as number };
}

/** The sandbox size for one container: its own `size` storage option, else the daemon's. */
export function sandboxSizeFor(opts: CreateOptions, defaults: WinfilterOptions): number {
  const size = layerSizeOption("winfilter", opts);
  return size === undefined ? defaults.sandboxBytes : layerSize("winfilter", size);
}
