/**
 * The top-level values of the client's config.json, read once per process: several things look
 * into it as `engine ps` starts (the context to use, `psFormat`), and the start is measured.
 * A missing or unreadable file, or one that is not a JSON object, reads as empty, as the Docker
 * CLI goes on without it. Writers (auth/config.ts) read the file afresh.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const cache = new Map<string, Record<string, unknown>>();

function configValues(configDir: string): Record<string, unknown> {
  let values = cache.get(configDir);
  if (values) return values;
  values = {};
  try {
    const parsed = JSON.parse(readFileSync(join(configDir, "config.json"), "utf8")) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) values = parsed as Record<string, unknown>;
  } catch {
    // no file, or not JSON: no values
  }
  cache.set(configDir, values);
  return values;
}

/** A string value of config.json ("psFormat", "currentContext"...), or "". */
export function configString(configDir: string, key: string): string {
  const value = configValues(configDir)[key];
  return typeof value === "string" ? value : "";
}

/** An object value of config.json ("proxies"...), or undefined. */
export function configObject(configDir: string, key: string): Record<string, unknown> | undefined {
  const value = configValues(configDir)[key];
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
