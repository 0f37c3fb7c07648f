/**
 * The X-Registry-Auth header for a pull or push: the credentials config.json holds for the
 * reference's registry, as base64url JSON `{username, password, serveraddress}` (the Docker CLI's
 * encoding, padding included). Docker Hub's credentials are saved under its old index address.
 */
import { allCredentials, credentialsFor, type Credentials } from "./config.js";
import { DEFAULT_DOMAIN, parseNormalizedNamed, type NamedReference } from "../reference.js";

/** The key Docker Hub's credentials are saved under. */
export const INDEX_SERVER = "https://index.docker.io/v1/";

/** The config.json key for a registry domain (`docker.io` -> Docker Hub's index address). */
export function authKeyFor(domain: string): string {
  return domain === DEFAULT_DOMAIN || domain === "index.docker.io" ? INDEX_SERVER : domain;
}

/** One registry's AuthConfig as Docker's CLI marshals it. */
function authConfig(serveraddress: string, creds?: Credentials): Record<string, string> {
  // Go's field order and omitempty: username, password, serveraddress, identitytoken
  const json: Record<string, string> = {};
  if (creds?.username) json.username = creds.username;
  if (creds?.password) json.password = creds.password;
  json.serveraddress = serveraddress;
  if (creds?.identitytoken) json.identitytoken = creds.identitytoken;
  return json;
}

/** Go's base64.URLEncoding (padding kept) of a value's JSON. */
const base64Url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64").replace(/\+/g, "-").replace(/\//g, "_");

/** The header's value for credentials (or none: only the server address). */
export function encodeAuthConfig(serveraddress: string, creds?: Credentials): string {
  return base64Url(authConfig(serveraddress, creds));
}

/** X-Registry-Config for a build: every saved credential by its key (sorted, as Go writes a map), for the base images it pulls. */
export function registryConfigFor(configDir: string, warn?: (text: string) => void): string {
  const all = allCredentials(configDir, warn).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return base64Url(Object.fromEntries(all.map(([key, creds]) => [key, authConfig(key, creds)])));
}

/** X-Registry-Auth for an image reference (parsed or as typed), from the config folder. */
export function registryAuthFor(configDir: string, image: string | NamedReference, warn?: (text: string) => void): string {
  const ref = typeof image === "string" ? parseNormalizedNamed(image) : image;
  const key = authKeyFor(ref.domain);
  return encodeAuthConfig(key, credentialsFor(configDir, key, warn));
}
