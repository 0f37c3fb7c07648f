/**
 * The log options Docker's daemon takes for every log driver, besides the driver's own:
 * `mode` (blocking / non-blocking delivery), `max-buffer-size` (non-blocking's buffer) and the
 * dual-logging `cache-*` options. Docker checks them at container create, before the driver's
 * own keys, and lets a driver that does not use them ignore them. Here the supervisor's spool
 * already keeps a slow logger from blocking a container, and readable drivers need no cache, so
 * drivers accept these, check them with Docker's words (`checkCommonLogOptions`), and move on.
 */
import { goFromHumanSize, goParseBool } from "./options/go-values.js";

export const COMMON_LOG_OPTIONS: readonly string[] = ["mode", "max-buffer-size", "cache-disabled", "cache-max-file", "cache-max-size", "cache-compress"];

/** Throws Docker's create-time error for the common options (in the order Docker checks them). */
export function checkCommonLogOptions(options: Record<string, string>): void {
  const disabled = options["cache-disabled"];
  if (disabled !== undefined) {
    try {
      goParseBool(disabled);
    } catch {
      throw new Error(`invalid value for option cache-disabled: ${disabled}`);
    }
  }
  const mode = options.mode;
  if (mode !== undefined && mode !== "" && mode !== "blocking" && mode !== "non-blocking") {
    throw new Error(`logger: logging mode not supported: ${mode}`);
  }
  const buffer = options["max-buffer-size"];
  if (buffer !== undefined) {
    if (mode !== "non-blocking") throw new Error("logger: max-buffer-size option is only supported with 'mode=non-blocking'");
    try {
      goFromHumanSize(buffer);
    } catch (err) {
      throw new Error(`error parsing option max-buffer-size: ${(err as Error).message}`);
    }
  }
}
