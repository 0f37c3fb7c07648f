/**
 * The client's config.json (in ctx.configDir, ~/.engine by default), in the Docker CLI's shape:
 * `{"auths": {"<registry>": {"auth": base64("user:password")}}}`. Only `auths` (and, through
 * context/config-current.ts, `currentContext`) is ours to change: every other key (credsStore,
 * credHelpers, psFormat, ...) is written back as it was read, in its place, since the same file
 * may be shared with tools that use them.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Credentials {
  username: string;
  password: string;
  /** A refresh token the registry gave at login; replaces the password. */
  identitytoken?: string;
}

interface AuthEntry {
  auth?: string;
  identitytoken?: string;
  [key: string]: unknown;
}

export type ConfigFile = Record<string, unknown> & { auths?: Record<string, AuthEntry> };

const configPath = (dir: string): string => join(dir, "config.json");

/** `https://host:5000/v1/` -> `host:5000`: how Docker's CLI matches keys saved in older forms. */
export function convertToHostname(address: string): string {
  return address.replace(/^https?:\/\//, "").split("/")[0];
}

/** The file's content; {} when there is none. A file that is not JSON is an error (never overwritten). */
export function readConfig(dir: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(configPath(dir), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw e;
  }
  if (text.trim() === "") return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as ConfigFile;
  } catch {
    // reported below
  }
  throw new Error(`Error parsing config file (${configPath(dir)}): not a JSON object`);
}

/** Written as Docker's CLI writes it (tab-indented, no final newline, 0600) through a rename, so a crash leaves the old file. */
export function writeConfig(dir: string, config: ConfigFile): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = configPath(dir);
  const temp = `${path}.${process.pid}.tmp`;
  // Go writes a map's keys sorted
  if (config.auths) config.auths = Object.fromEntries(Object.entries(config.auths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(temp, JSON.stringify(config, null, "\t"), { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

function decode(entry: AuthEntry): Credentials {
  const text = entry.auth ? Buffer.from(entry.auth, "base64").toString("utf8") : "";
  const colon = text.indexOf(":");
  const creds: Credentials = colon < 0 ? { username: "", password: "" } : { username: text.slice(0, colon), password: text.slice(colon + 1) };
  if (entry.identitytoken) creds.identitytoken = entry.identitytoken;
  return creds;
}

/** The credentials saved for a registry key, or undefined. A file that cannot be read counts as none (with a warning). */
export function credentialsFor(dir: string, key: string, warn?: (text: string) => void): Credentials | undefined {
  let auths: Record<string, AuthEntry>;
  try {
    auths = readConfig(dir).auths ?? {};
  } catch (e) {
    warn?.(`WARNING: ${(e as Error).message}\n`);
    return undefined;
  }
  if (auths[key]) return decode(auths[key]);
  for (const [k, entry] of Object.entries(auths)) if (convertToHostname(k) === key) return decode(entry);
  return undefined;
}

/** Every registry's saved credentials, by key, in the file's order (a build sends them all). */
export function allCredentials(dir: string, warn?: (text: string) => void): [string, Credentials][] {
  try {
    return Object.entries(readConfig(dir).auths ?? {}).map(([key, entry]) => [key, decode(entry)]);
  } catch (e) {
    warn?.(`WARNING: ${(e as Error).message}\n`);
    return [];
  }
}

/** The file's `proxies.default` (`httpProxy`, `httpsProxy`, `noProxy`, `ftpProxy`, `allProxy`), if any. */
export function defaultProxies(dir: string): Record<string, string> {
  try {
    const proxies = readConfig(dir).proxies as Record<string, Record<string, string>> | undefined;
    return proxies?.default ?? {};
  } catch {
    return {};
  }
}

export function storeCredentials(dir: string, key: string, creds: Credentials): void {
  const config = readConfig(dir);
  const entry: AuthEntry = {};
  if (creds.username || creds.password) entry.auth = Buffer.from(`${creds.username}:${creds.password}`).toString("base64");
  if (creds.identitytoken) entry.identitytoken = creds.identitytoken;
  // "auths" leads, as in the files Docker's CLI writes
  const next: ConfigFile = { auths: {}, ...config };
  next.auths = { ...config.auths, [key]: entry };
  writeConfig(dir, next);
}

/** Removes the credentials saved under any of `keys`; whether there were any. */
export function eraseCredentials(dir: string, keys: readonly string[]): boolean {
  const config = readConfig(dir);
  const auths = config.auths ?? {};
  const found = keys.filter((k) => k in auths);
  if (found.length === 0) return false;
  for (const k of found) delete auths[k];
  writeConfig(dir, { ...config, auths });
  return true;
}
