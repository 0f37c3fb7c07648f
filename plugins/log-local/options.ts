/**
 * Why this file: the `local` driver's `--log-opt` rules, Docker 20.10's, in one place. As with
 * json-file, names are checked at container create (`checkLocalOptions`) and values when the
 * logger is made at start (`parseLocalOptions`), with Docker's words.
 */
import { checkCommonLogOptions, COMMON_LOG_OPTIONS } from "../../core/log-options.js";
import { goAtoi, goFromHumanSize, goParseBool } from "../../core/options/go-values.js";

const KNOWN_OPTIONS = new Set(["max-size", "max-file", "compress", ...COMMON_LOG_OPTIONS]);

const DEFAULT_MAX_SIZE = 20 * 1024 * 1024;
const DEFAULT_MAX_FILE = 5;

export interface LocalConfig {
  /** Bytes at which the file rotates (before the next write); 0 rotates before every write. */
  maxSize: number;
  /** Files kept, the current one included; 0 and 1 both keep one (truncated in place). */
  maxFile: number;
  compress: boolean;
}

/** Docker's create-time check: the daemon-wide options, then `unknown log opt '<key>' for log driver local`. */
export function checkLocalOptions(options: Record<string, string>): void {
  checkCommonLogOptions(options);
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new Error(`unknown log opt '${key}' for log driver local`);
  }
}

function wrap<T>(prefix: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new Error(`${prefix}${(err as Error).message}`);
  }
}

/**
 * The start-time check, Docker 20.10's order and words. Defaults: max-size 20 MiB (`20m` given
 * as an option is decimal, go-units' FromHumanSize, as Docker), max-file 5, compress true.
 */
export function parseLocalOptions(options: Record<string, string>): LocalConfig {
  checkLocalOptions(options);
  const cfg: LocalConfig = { maxSize: DEFAULT_MAX_SIZE, maxFile: DEFAULT_MAX_FILE, compress: true };
  const size = options["max-size"];
  if (size !== undefined) cfg.maxSize = wrap(`invalid value for max-size: ${size}: `, () => goFromHumanSize(size));
  const file = options["max-file"];
  if (file !== undefined) cfg.maxFile = wrap(`invalid value for max-file: ${file}: `, () => goAtoi(file));
  const compress = options.compress;
  if (compress !== undefined) cfg.compress = wrap("error reading compress log option: ", () => goParseBool(compress));
  if (cfg.maxFile < 0) throw new Error("max file count cannot be less than 0");
  if (cfg.compress && cfg.maxFile <= 1) throw new Error("compression cannot be enabled when max file count is 1");
  return cfg;
}
