/**
 * `-f/--filter key=value` (repeatable) as the Docker CLI reads it, into the API's `filters`
 * query value ({"label":{"a=b":true}}); and the list formats a user may set in the client's
 * config.json (psFormat, imagesFormat, networksFormat, volumesFormat, statsFormat), as the Docker CLI reads them.
 */
import { configString } from "../config-file.js";
import { UsageError } from "../flags.js";

/** The filters JSON, or undefined when none was given. */
export function filtersJson(values: readonly string[], flag = "-f, --filter"): string | undefined {
  if (values.length === 0) return undefined;
  const filters: Record<string, Record<string, boolean>> = {};
  for (const arg of values) {
    const eq = arg.indexOf("=");
    if (eq < 0) throw new UsageError(`invalid argument "${arg}" for "${flag}" flag: bad format of filter (expected name=value)`);
    const key = arg.slice(0, eq).trim().toLowerCase();
    (filters[key] ??= {})[arg.slice(eq + 1).trim()] = true;
  }
  const sorted: Record<string, Record<string, boolean>> = {};
  for (const k of Object.keys(filters).sort()) sorted[k] = filters[k];
  return JSON.stringify(sorted);
}

/** A format from `<configDir>/config.json` ("psFormat"...), or "". */
export function configFormat(configDir: string, key: "psFormat" | "imagesFormat" | "networksFormat" | "volumesFormat" | "statsFormat"): string {
  return configString(configDir, key);
}
