/**
 * The detach keys of an attach or exec stream (`detachKeys` of attach's query, `DetachKeys` of
 * an exec): typed on an attached stdin they end the attachment and leave the process running.
 * The daemon watches the input for them, as Docker's does, so every client detaches alike.
 */
import { DEFAULT_DETACH_KEYS, parseDetachKeys } from "../../core/containers/detach-keys.js";
import { errors } from "../../core/errors.js";

/**
 * The sequence as bytes (the default when none is given); a 400 for one that cannot be typed,
 * in attach's words, or an exec's (`for: "exec"`): Docker's two say it differently.
 */
export function detachKeysOf(spec: string | undefined, opts: { for?: "attach" | "exec" } = {}): Buffer {
  if (!spec) return DEFAULT_DETACH_KEYS;
  try {
    return parseDetachKeys(spec);
  } catch {
    throw opts.for === "exec" ? errors.execDetachKeysInvalid(spec) : errors.detachKeysInvalid(spec);
  }
}
