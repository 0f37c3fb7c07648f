/**
 * Why this file: the `--log-opt` checks of the json-file driver live apart from the code that
 * writes and reads files, so the daemon can validate options (`validateOptions`) without
 * touching the disk, and the rules can be read in one place (see README.md, Options).
 */
import { parseBytes } from "../../core/options/value-types-structured.js";

const KNOWN_OPTIONS = new Set([
  "max-size",
  "max-file",
  "compress",
  "labels",
  "labels-regex",
  "env",
  "env-regex",
  "tag",
  "cache-disabled",
  "cache-max-file",
  "cache-max-size",
  "cache-compress",
]);

/** The fields a `tag` template may use (expanded in format.ts). */
export const TAG_FIELDS = ["ID", "FullID", "Name", "ImageID", "ImageFullID", "ImageName", "DaemonName"] as const;
export const TAG_FIELD_RE = /\{\{\s*\.(\w+)\s*\}\}/g;

export interface JsonFileConfig {
  /** Bytes at which the file rotates; undefined: never. */
  maxSize?: number;
  /** Files kept, the current one included (>= 1). */
  maxFile: number;
  compress: boolean;
  labels: string[];
  labelsRegex?: RegExp;
  env: string[];
  envRegex?: RegExp;
  tag?: string;
}

function fail(message: string): never {
  throw new Error(`json-file: ${message}`);
}

/** Go's strconv.ParseBool. */
function parseGoBool(key: string, raw: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(raw)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(raw)) return false;
  fail(`invalid value for log opt '${key}': ${JSON.stringify(raw)} is not a boolean`);
}

function parseInteger(key: string, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw.trim())) fail(`invalid value for log opt '${key}': ${JSON.stringify(raw)} is not an integer`);
  return Number(raw.trim());
}

function parseSize(key: string, raw: string): number {
  try {
    return parseBytes(raw);
  } catch (err) {
    fail(`invalid value for log opt '${key}': ${JSON.stringify(raw)}: ${(err as Error).message}`);
  }
}

function parseRegex(key: string, raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (err) {
    fail(`invalid value for log opt '${key}': ${(err as Error).message}`);
  }
}

/**
 * Checks the options as Docker's json-file driver does and returns what they mean. Throws an
 * Error naming the first unknown or invalid option. Rules (Docker's, plus one):
 * - an unknown key: `unknown log opt '<key>' for json-file log driver`;
 * - max-size: a size (parseBytes, 1024-based), larger than 0;
 * - max-file: an integer >= 1 (default 1); a value above 1 needs max-size (Docker silently
 *   ignores it; we refuse, since it would do nothing);
 * - compress: a boolean; true needs max-size and max-file >= 2 (Docker's rule);
 * - labels-regex, env-regex: valid regular expressions; tag: a template of known fields;
 * - cache-disabled, cache-compress: booleans; cache-max-size: a size; cache-max-file: an
 *   integer >= 0. They only concern dual logging, which a readable driver does not use.
 */
export function parseJsonFileOptions(options: Record<string, string>): JsonFileConfig {
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) fail(`unknown log opt '${key}' for json-file log driver`);
  }
  const cfg: JsonFileConfig = { maxFile: 1, compress: false, labels: [], env: [] };
  if (options["max-size"] !== undefined) {
    const size = parseSize("max-size", options["max-size"]);
    if (size <= 0) fail("invalid value for log opt 'max-size': max-size must be a positive number");
    cfg.maxSize = size;
  }
  if (options["max-file"] !== undefined) {
    cfg.maxFile = parseInteger("max-file", options["max-file"]);
    if (cfg.maxFile < 1) fail("invalid value for log opt 'max-file': max-file cannot be less than 1");
    if (cfg.maxFile > 1 && cfg.maxSize === undefined) fail("log opt 'max-file' can only be set when 'max-size' is set");
  }
  if (options.compress !== undefined) {
    cfg.compress = parseGoBool("compress", options.compress);
    if (cfg.compress && (cfg.maxFile < 2 || cfg.maxSize === undefined)) {
      fail("log opt 'compress' cannot be true when max-file is less than 2 or max-size is not set");
    }
  }
  if (options.labels) cfg.labels = options.labels.split(",");
  if (options["labels-regex"]) cfg.labelsRegex = parseRegex("labels-regex", options["labels-regex"]);
  if (options.env) cfg.env = options.env.split(",");
  if (options["env-regex"]) cfg.envRegex = parseRegex("env-regex", options["env-regex"]);
  if (options.tag) {
    const rest = options.tag.replace(TAG_FIELD_RE, (whole, field: string) => {
      if (!(TAG_FIELDS as readonly string[]).includes(field)) {
        fail(`invalid value for log opt 'tag': unknown field .${field} (known: ${TAG_FIELDS.map((f) => "." + f).join(", ")})`);
      }
      return "";
    });
    if (rest.includes("{{")) fail(`invalid value for log opt 'tag': ${JSON.stringify(options.tag)} is not a template of known fields`);
    cfg.tag = options.tag;
  }
  if (options["cache-disabled"] !== undefined) parseGoBool("cache-disabled", options["cache-disabled"]);
  if (options["cache-compress"] !== undefined) parseGoBool("cache-compress", options["cache-compress"]);
  if (options["cache-max-size"] !== undefined) parseSize("cache-max-size", options["cache-max-size"]);
  if (options["cache-max-file"] !== undefined && parseInteger("cache-max-file", options["cache-max-file"]) < 0) {
    fail("invalid value for log opt 'cache-max-file': cannot be less than 0");
  }
  return cfg;
}
