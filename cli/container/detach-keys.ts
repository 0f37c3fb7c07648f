/**
 * The client's detach keys: the `--detach-keys` flag, or the config file's `detachKeys`; the
 * parsing and matching are shared with the daemon (core/containers/detach-keys.ts).
 */
import { configString } from "../config-file.js";

export { DEFAULT_DETACH_KEYS, DetachMatcher, parseDetachKeys } from "../../core/containers/detach-keys.js";

/** `detachKeys` of the client's config.json, if it sets one (the file as read once at start). */
export function configDetachKeys(configDir: string): string | undefined {
  return configString(configDir, "detachKeys") || undefined;
}
