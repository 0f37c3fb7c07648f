/**
 * Registry authentication. A registry says how it wants to be authenticated in the
 * `WWW-Authenticate` header of a 401: `Basic realm=...` (credentials on every request) or
 * `Bearer realm=...,service=...` (a token from the realm, scoped to the repositories and actions
 * asked for). Tokens are cached by realm, service, scope and identity until shortly before they
 * expire. Credentials come from the client (`X-Registry-Auth`): a user name and password, or an
 * identity token (an OAuth2 refresh token) from an earlier login. None of them is ever logged.
 */
import type { Dispatcher } from "undici";
import { undici } from "../http/undici.js";
import { errors } from "../../core/errors.js";

export interface Credentials {
  username?: string;
  password?: string;
  /** An OAuth2 refresh token from a login (`IdentityToken`). */
  identitytoken?: string;
  /** A bearer token to send as is. */
  registrytoken?: string;
  serveraddress?: string;
}

export interface Challenge {
  scheme: "basic" | "bearer";
  params: Record<string, string>;
}

/** Reads `Bearer realm="...",service="..."` (several challenges may be given; bearer wins). */
export function parseChallenges(header: string | string[] | undefined): Challenge[] {
  const out: Challenge[] = [];
  for (const line of [header ?? []].flat()) {
    const re = /\s*([A-Za-z]+)\s+((?:[a-zA-Z_]+=(?:"(?:[^"\\]|\\.)*"|[^,\s]*)\s*,?\s*)+)/g;
    for (let m = re.exec(line); m; m = re.exec(line)) {
      const scheme = m[1].toLowerCase();
      if (scheme !== "basic" && scheme !== "bearer") continue;
      const params: Record<string, string> = {};
      const pr = /([a-zA-Z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g;
      for (let p = pr.exec(m[2]); p; p = pr.exec(m[2])) params[p[1].toLowerCase()] = (p[2] ?? p[3]).replace(/\\(.)/g, "$1");
      out.push({ scheme, params });
    }
  }
  return out.sort((a, b) => (a.scheme === b.scheme ? 0 : a.scheme === "bearer" ? -1 : 1));
}

export function basicHeader(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username ?? ""}:${c.password ?? ""}`).toString("base64")}`;
}

const hasLogin = (c?: Credentials) => Boolean(c && (c.username || c.password));

interface CachedToken {
  token: string;
  expires: number;
  refreshToken?: string;
}

export interface TokenAnswer {
  token: string;
  /** A refresh token, when one was asked for (login) and given. */
  refreshToken?: string;
}

/** Tokens by realm, service, scope and identity. */
export class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();

  private key(realm: string, service: string, scopes: readonly string[], creds?: Credentials): string {
    const who = creds?.identitytoken ? `id:${creds.identitytoken}` : hasLogin(creds) ? `user:${creds!.username}:${creds!.password}` : "anonymous";
    return JSON.stringify([realm, service, [...scopes].sort(), who]);
  }

  /** A token for the scopes, from the cache or the realm. */
  async token(
    challenge: Challenge,
    scopes: readonly string[],
    creds: Credentials | undefined,
    dispatcher: Dispatcher,
    opts: { offline?: boolean; signal?: AbortSignal; fresh?: boolean } = {},
  ): Promise<TokenAnswer> {
    const realm = challenge.params.realm;
    if (!realm) throw errors.registryAuthFailed("the registry's bearer challenge names no realm");
    const service = challenge.params.service ?? "";
    const key = this.key(realm, service, scopes, creds);
    const cached = this.tokens.get(key);
    if (cached && !opts.fresh && !opts.offline && cached.expires > Date.now()) return { token: cached.token };
    const answer = await fetchToken(realm, service, scopes, creds, dispatcher, opts);
    this.tokens.set(key, { token: answer.token, expires: answer.expires });
    return answer;
  }

  /** Forgets a token the registry refused (it expired early, or was revoked). */
  forget(challenge: Challenge, scopes: readonly string[], creds?: Credentials): void {
    this.tokens.delete(this.key(challenge.params.realm ?? "", challenge.params.service ?? "", scopes, creds));
  }
}

async function fetchToken(
  realm: string,
  service: string,
  scopes: readonly string[],
  creds: Credentials | undefined,
  dispatcher: Dispatcher,
  opts: { offline?: boolean; signal?: AbortSignal },
): Promise<TokenAnswer & { expires: number }> {
  let res: Dispatcher.ResponseData;
  const url = new URL(realm);
  if (creds?.identitytoken) {
    // OAuth2: a refresh token is exchanged with a POST (Docker's token protocol, v2).
    const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: creds.identitytoken, client_id: "engine" });
    if (service) form.set("service", service);
    if (scopes.length) form.set("scope", scopes.join(" "));
    res = await undici().request(url, {
      method: "POST",
      dispatcher,
      signal: opts.signal,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    });
  } else {
    if (service) url.searchParams.set("service", service);
    for (const scope of scopes) url.searchParams.append("scope", scope);
    const headers: Record<string, string> = {};
    if (hasLogin(creds)) {
      url.searchParams.set("account", creds!.username ?? "");
      headers.authorization = basicHeader(creds!);
    }
    if (opts.offline) {
      url.searchParams.set("offline_token", "true");
      url.searchParams.set("client_id", "engine");
    }
    res = await undici().request(url, { method: "GET", dispatcher, signal: opts.signal, headers });
  }
  const text = await res.body.text();
  if (res.statusCode === 401 || res.statusCode === 403) {
    throw errors.registryUnauthorized(registryMessage(text) ?? "incorrect username or password");
  }
  if (res.statusCode !== 200) throw errors.registryAuthFailed(`the token server ${url.host} answered ${res.statusCode}`);
  let body: { token?: string; access_token?: string; expires_in?: number; issued_at?: string; refresh_token?: string };
  try {
    body = JSON.parse(text);
  } catch {
    throw errors.registryAuthFailed(`the token server ${url.host} answered with something other than JSON`);
  }
  const token = body.access_token || body.token;
  if (!token) throw errors.registryAuthFailed(`the token server ${url.host} gave no token`);
  // Docker's minimum: a token is good for at least 60 s unless said otherwise
  const lifetime = Math.max(body.expires_in ?? 60, 60) * 1000;
  const issued = body.issued_at ? Date.parse(body.issued_at) || Date.now() : Date.now();
  // refreshed a little early: a token that expires in flight costs a failed request
  const expires = Math.min(issued, Date.now()) + lifetime - 5_000;
  return { token, expires, ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}) };
}

/** The message of a registry's JSON error body (`{"errors":[{"code","message"}]}`), if any. */
export function registryMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { errors?: { code?: string; message?: string; detail?: unknown }[]; details?: string };
    const first = body.errors?.[0];
    if (first) return `${(first.code ?? "error").toLowerCase().replace(/_/g, " ")}: ${first.message ?? ""}`.replace(/: $/, "");
    if (body.details) return body.details;
  } catch {
    // not JSON
  }
  return undefined;
}
