/**
 * What storage drivers read alike in a layer's own options (`docker run --storage-opt size=...`):
 * sizes in Docker's units (`units.RAMInBytes`: `10G`, `10GB`, `10GiB` are 10 x 1024^3 bytes).
 * (The daemon's `--storage-opt` are read by the host from the manifests' declarations.)
 * Every refusal is a 400 from the catalogue that names the driver, the option and the value.
 */
import type { CreateOptions } from "../contracts/storage.js";
import { errors } from "../errors.js";
import { parseBytes } from "../options/value-types-structured.js";

/** `value` in bytes, above 0; `invalid(why)` is the error otherwise. */
function positiveSize(value: string, invalid: (why: string) => Error): number {
  let bytes: number;
  try {
    bytes = parseBytes(value);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  if (!(bytes > 0)) throw invalid("must be larger than 0");
  return bytes;
}

/** A layer's `size` (`docker run --storage-opt size=10G`), in bytes. */
export function layerSize(driver: string, value: string): number {
  return positiveSize(value, (why) => errors.storageLayerSizeInvalid(driver, value, why));
}

/** The per-layer `size` option as given (any case), or undefined; any other per-layer option is an error. */
export function layerSizeOption(driver: string, opts: CreateOptions): string | undefined {
  let size: string | undefined;
  for (const [key, value] of Object.entries(opts.storageOpts ?? {})) {
    if (key.toLowerCase() !== "size") throw errors.storageLayerOptionUnknown(driver, key);
    size = value;
  }
  return size;
}
