/**
 * What storage drivers read alike in their options: sizes (Docker's units, `units.RAMInBytes`:
 * `10G`, `10GB`, `10GiB` are 10 x 1024^3 bytes) and the per-layer `size` storage option of
 * `docker run --storage-opt size=...`. Errors name the driver, the option and the value.
 */
import type { CreateOptions } from "./contracts/storage.js";
import { parseBytes } from "./options/value-types-structured.js";

/** `value` in bytes, above 0; else `<driver>: invalid <option> "<value>": ...`. */
export function parseStorageSize(driver: string, option: string, value: string): number {
  let bytes: number;
  try {
    bytes = parseBytes(value);
  } catch (err) {
    throw new Error(`${driver}: invalid ${option} ${JSON.stringify(value)}: ${(err as Error).message}`);
  }
  if (bytes <= 0) throw new Error(`${driver}: ${option} must be larger than 0`);
  return bytes;
}

/** The per-layer `size` option as given (any case), or undefined; any other per-layer option is an error. */
export function layerSizeOption(driver: string, opts: CreateOptions): string | undefined {
  let size: string | undefined;
  for (const [key, value] of Object.entries(opts.storageOpts ?? {})) {
    if (key.toLowerCase() !== "size") throw new Error(`${driver}: unknown storage option ${key}`);
    size = value;
  }
  return size;
}
