/**
 * `X-Registry-Auth`: base64url (or standard base64) of a JSON object with `username`,
 * `password`, `serveraddress`, or an `identitytoken`. Empty, `{}` and `e30=` (what clients send
 * without credentials) mean none. The body of `POST /auth` has the same fields.
 */
import { errors } from "../../core/errors.js";
import type { Credentials } from "./auth.js";

export function decodeAuthHeader(header: string | string[] | undefined): Credentials | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (!text || !text.trim()) return undefined;
  let json: string;
  try {
    json = Buffer.from(text.trim().replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8");
  } catch {
    throw errors.registryInvalidAuthHeader("not base64");
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw errors.registryInvalidAuthHeader("not base64-encoded JSON");
  }
  return credentialsOf(value);
}

/** The credential fields of a JSON object (either case, as Docker's clients vary). */
export function credentialsOf(value: unknown): Credentials | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw errors.registryInvalidAuthHeader("not a JSON object");
  const v = value as Record<string, unknown>;
  const pick = (...keys: string[]) => {
    for (const k of keys) if (typeof v[k] === "string" && v[k] !== "") return v[k] as string;
    return undefined;
  };
  const creds: Credentials = {
    username: pick("username", "Username"),
    password: pick("password", "Password"),
    identitytoken: pick("identitytoken", "IdentityToken"),
    registrytoken: pick("registrytoken", "RegistryToken"),
    serveraddress: pick("serveraddress", "ServerAddress"),
  };
  // an `auth` field (base64 of user:password) as in config.json
  const auth = pick("auth", "Auth");
  if (auth && !creds.username) {
    const plain = Buffer.from(auth, "base64").toString("utf8");
    const colon = plain.indexOf(":");
    if (colon > 0) Object.assign(creds, { username: plain.slice(0, colon), password: plain.slice(colon + 1) });
  }
  const any = Object.values(creds).some((x) => x !== undefined && x !== creds.serveraddress);
  return any ? creds : undefined;
}
