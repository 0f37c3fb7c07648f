/**
 * The X-Registry-Auth header for a pull or push: the credentials config.json holds for the
 * reference's registry, as base64url JSON `{username, password, serveraddress}` (the Docker CLI's
 * encoding, padding included). Docker Hub's credentials are saved under its old index address.
 */
import { credentialsFor, type Credentials } from "./config.js";
import { DEFAULT_DOMAIN, parseNormalizedNamed, type NamedReference } from "../reference.js";

/** The key Docker Hub's credentials are saved under. */
export const INDEX_SERVER = "https://index.docker.io/v1/";

/** The config.json key for a registry domain (`docker.io` -> Docker Hub's index address). */
export function authKeyFor(domain: string): string {
  return domain === DEFAULT_DOMAIN || domain === "index.docker.io" ? INDEX_SERVER : domain;
}

/** The header's value for credentials (or none: only the server address). */
export function encodeAuthConfig(serveraddress: string, creds?: Credentials): string {
  // Go's field order and omitempty: username, password, serveraddress, identitytoken
  const json: Record<string, string> = {};
  if (creds?.username) json.username = creds.username;
  if (creds?.password) json.password = creds.password;
  json.serveraddress = serveraddress;
  if (creds?.identitytoken) json.identitytoken = creds.identitytoken;
  return Buffer.from(JSON.stringify(json)).toString("base64").replace(/\+/g, "-").replace(/\//g, "_");
}

/** X-Registry-Auth for an image reference (parsed or as typed), from the config folder. */
export function registryAuthFor(configDir: string, image: string | NamedReference, warn?: (text: string) => void): string {
  const ref = typeof image === "string" ? parseNormalizedNamed(image) : image;
  const key = authKeyFor(ref.domain);
  return encodeAuthConfig(key, credentialsFor(configDir, key, warn));
}
