/**
 * Why this file: the `--log-opt` checks of the json-file driver live apart from the code that
 * writes and reads files, so the daemon can validate options without touching the disk, and
 * the rules can be read in one place (see README.md, Options).
 *
 * Docker checks in two steps, and so does this driver: at container create only the names
 * (`checkJsonFileOptions`, the driver's `validateOptions`); the values when the logger is made
 * at start (`parseJsonFileOptions`, in `createLogger`), with Go's words for a bad value. So
 * `docker create --log-opt max-size=abc` succeeds and its start fails, as with Docker.
 */
import { checkCommonLogOptions, COMMON_LOG_OPTIONS } from "../../core/log-options.js";
import { goAtoi, goFromHumanSize, goParseBool } from "../../core/options/go-values.js";
import { goRegexp, parseTagTemplate } from "./templates.js";

const OWN_OPTIONS = ["max-size", "max-file", "compress", "labels", "labels-regex", "env", "env-regex", "tag"];
const KNOWN_OPTIONS = new Set([...OWN_OPTIONS, ...COMMON_LOG_OPTIONS]);

export { TAG_FIELD_RE, TAG_FIELDS } from "./templates.js";

export interface JsonFileConfig {
  /** Bytes at which the file rotates; undefined: never. */
  maxSize?: number;
  /** Files kept, the current one included (>= 1); without maxSize it changes nothing. */
  maxFile: number;
  compress: boolean;
  labels: string[];
  labelsRegex?: RegExp;
  env: string[];
  envRegex?: RegExp;
  tag?: string;
}

/**
 * The create-time check, as Docker's: the daemon-wide options (`mode`, `max-buffer-size`,
 * `cache-disabled`), then an unknown name: `unknown log opt '<key>' for json-file log driver`.
 */
export function checkJsonFileOptions(options: Record<string, string>): void {
  checkCommonLogOptions(options);
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new Error(`unknown log opt '${key}' for json-file log driver`);
  }
}

/**
 * The start-time check: the names, then the values in Docker 20.10's order and words
 * (`invalid size: 'abc'`, `max-size must be a positive number`, `strconv.Atoi: parsing "x":
 * invalid syntax`, `max-file cannot be less than 1`, `strconv.ParseBool: ...`, `compress cannot
 * be true when max-file is less than 2 or max-size is not set`, regexp and tag template errors).
 * `max-size` is decimal (go-units' FromHumanSize: `1k` = 1000). `max-file` without `max-size`
 * is accepted and does nothing, as with Docker. The `cache-*` values are not looked at: json-file
 * is readable itself, so it has no cache.
 */
export function parseJsonFileOptions(options: Record<string, string>): JsonFileConfig {
  checkJsonFileOptions(options);
  const cfg: JsonFileConfig = { maxFile: 1, compress: false, labels: [], env: [] };
  if (options["max-size"] !== undefined) {
    const size = goFromHumanSize(options["max-size"]);
    if (size <= 0) throw new Error("max-size must be a positive number");
    cfg.maxSize = size;
  }
  if (options["max-file"] !== undefined) {
    cfg.maxFile = goAtoi(options["max-file"]);
    if (cfg.maxFile < 1) throw new Error("max-file cannot be less than 1");
  }
  if (options.compress !== undefined) {
    cfg.compress = goParseBool(options.compress);
    if (cfg.compress && (cfg.maxFile === 1 || cfg.maxSize === undefined)) {
      throw new Error("compress cannot be true when max-file is less than 2 or max-size is not set");
    }
  }
  if (options.labels) cfg.labels = options.labels.split(",");
  if (options["labels-regex"]) cfg.labelsRegex = goRegexp(options["labels-regex"]);
  if (options.env) cfg.env = options.env.split(",");
  if (options["env-regex"]) cfg.envRegex = goRegexp(options["env-regex"]);
  if (options.tag) {
    parseTagTemplate(options.tag);
    cfg.tag = options.tag;
  }
  return cfg;
}
