/**
 * Which storage driver the daemon uses: the one named by `--storage-driver`, the
 * `storage-driver` key or `ENGINE_DRIVER` (already merged into the configuration); else the
 * one whose state already exists under the data root, so that a restart keeps using it; else
 * overlay2. State of two drivers under one data root is ambiguous: the operator must choose.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { errors } from "../../core/errors.js";

const DEFAULT_STORAGE_DRIVER = "overlay2";

/** Built-in storage drivers: the `storage-<name>` folders among the built-in plugins. */
export function builtinStorageDrivers(builtinDir: string): string[] {
  try {
    return readdirSync(builtinDir)
      .filter((d) => d.startsWith("storage-"))
      .map((d) => d.slice("storage-".length));
  } catch {
    return [];
  }
}

export function selectStorageDriver(configured: string, dataRoot: string, known: readonly string[]): string {
  if (configured) return configured;
  const present = known.filter((name) => existsSync(join(dataRoot, name)));
  if (present.length > 1) throw errors.storageDriverAmbiguous(dataRoot, present);
  return present[0] ?? DEFAULT_STORAGE_DRIVER;
}

/** `--storage-opt k=v` entries as a map; a malformed entry is an error naming it. */
export function storageOptions(entries: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    if (eq <= 0) throw errors.storageOptionInvalid(entry);
    out[entry.slice(0, eq).trim().toLowerCase()] = entry.slice(eq + 1).trim();
  }
  return out;
}
