/**
 * The client's detach keys: the `--detach-keys` flag, or the config file's `detachKeys`; the
 * parsing and matching are shared with the daemon (core/containers/detach-keys.ts).
 */
export { DEFAULT_DETACH_KEYS, DetachMatcher, parseDetachKeys } from "../../core/containers/detach-keys.js";

/** `detachKeys` of the client's config.json, if it sets one. */
export async function configDetachKeys(configDir: string): Promise<string | undefined> {
  const { readFile } = await import("node:fs/promises");
  try {
    const config = JSON.parse(await readFile(`${configDir}/config.json`, "utf8")) as { detachKeys?: string };
    return config.detachKeys || undefined;
  } catch {
    return undefined;
  }
}
