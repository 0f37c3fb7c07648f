/**
 * A session with one repository on one registry endpoint, speaking the OCI distribution
 * protocol (`/v2/`): ping, manifests, blobs (with range reads for resuming), uploads
 * (monolithic, chunked, cross-repository mounts) and the tag list. Every request carries the
 * authorization the registry asked for; a 401 on the way (a token that expired early) gets a
 * fresh token and the request is sent once more.
 */
import { STATUS_CODES } from "node:http";
import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { undici } from "../http/undici.js";
import { errors, EngineError } from "../../core/errors.js";
import { goDialError } from "../../core/net/go-dial-error.js";
import { basicHeader, parseChallenges, registryMessage, type Challenge, type Credentials, type TokenCache } from "./auth.js";
import type { Endpoint } from "./endpoints.js";

export type Action = "pull" | "push";

export interface SessionOptions {
  endpoint: Endpoint;
  /** `library/busybox`. */
  repository: string;
  actions: readonly Action[];
  credentials?: Credentials;
  dispatcher: Dispatcher;
  tokens: TokenCache;
  signal?: AbortSignal;
}

export interface SendOptions {
  headers?: Record<string, string>;
  body?: Buffer | string | Readable | null;
  query?: Record<string, string>;
  /** Extra scopes this request needs (the source repository of a mount). */
  scopes?: string[];
  /** Whether the body can be sent again after a 401 (a stream cannot). */
  replayable?: boolean;
}

/** A network failure, as opposed to an answer: the next endpoint may do better. */
export class ConnectError extends Error {
  constructor(readonly url: string, override readonly cause: Error) {
    super(`${describeCause(cause)}`);
  }
  get tls(): boolean {
    const code = (this.cause as NodeJS.ErrnoException).code ?? "";
    return /^ERR_SSL|CERT|^UNABLE_TO|SELF_SIGNED|^ERR_TLS|EPROTO/.test(code) || /wrong version number|certificate/i.test(this.cause.message);
  }
}

function describeCause(cause: Error): string {
  const code = (cause as NodeJS.ErrnoException).code ?? "";
  if (/wrong version number|packet length too long/i.test(cause.message) || code === "ERR_SSL_WRONG_VERSION_NUMBER") {
    return "http: server gave HTTP response to HTTPS client";
  }
  const dial = goDialError(cause);
  if (dial) return dial;
  const inner = (cause as { cause?: Error }).cause;
  return inner && inner.message && !cause.message.includes(inner.message) ? `${cause.message}: ${inner.message}` : cause.message;
}

const scopeOf = (repository: string, actions: readonly Action[]) => `repository:${repository}:${actions.join(",")}`;

export class RegistrySession {
  private challenge?: Challenge;
  private pinged = false;

  constructor(readonly opts: SessionOptions) {}

  get endpoint(): Endpoint {
    return this.opts.endpoint;
  }

  /** `<endpoint>/v2/<repository><path>`. */
  url(path: string): string {
    return `${this.opts.endpoint.url}/v2/${this.opts.repository}${path}`;
  }

  /**
   * `GET /v2/`: whether the endpoint is a v2 registry, and how it wants to be authenticated.
   * A connection failure is a ConnectError; a registry that speaks only v1 is refused.
   */
  async ping(): Promise<void> {
    if (this.pinged) return;
    const url = `${this.opts.endpoint.url}/v2/`;
    const res = await this.raw("GET", url, {});
    await res.body.dump();
    if (res.statusCode === 401) {
      this.challenge = parseChallenges(res.headers["www-authenticate"])[0];
    } else if (res.statusCode === 404) {
      throw (await this.speaksV1()) ? errors.registryV1Only(this.opts.endpoint.host) : errors.registryNotARegistry(url, res.statusCode);
    } else if (res.statusCode >= 300) {
      throw errors.registryNotARegistry(url, res.statusCode);
    }
    this.pinged = true;
  }

  private async speaksV1(): Promise<boolean> {
    try {
      const res = await this.raw("GET", `${this.opts.endpoint.url}/v1/_ping`, {});
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  /**
   * Checks the credentials (login): resolves with an identity token when the registry gave one.
   * A registry that refuses them at its root is named as Docker's daemon names it ("login attempt
   * to <url>/v2/ failed with status: 401 Unauthorized"); a token server's refusal is its own words.
   */
  async login(): Promise<{ identityToken?: string }> {
    await this.ping();
    const creds = this.opts.credentials;
    if (!this.challenge) return {}; // a registry without authentication takes any login
    const root = `${this.opts.endpoint.url}/v2/`;
    const refused = (status: number) => errors.registryLoginRefused(root, status, STATUS_CODES[status] ?? "");
    if (this.challenge.scheme === "basic") {
      const res = await this.raw("GET", root, { authorization: basicHeader(creds ?? {}) });
      await res.body.dump();
      if (res.statusCode === 401 || res.statusCode === 403) throw refused(res.statusCode);
      if (res.statusCode >= 300) throw errors.registryNotARegistry(root, res.statusCode);
      return {};
    }
    const answer = await this.opts.tokens.token(this.challenge, [], creds, this.opts.dispatcher, { offline: true, signal: this.opts.signal, fresh: true });
    // the token must open the registry's root too
    const res = await this.raw("GET", root, { authorization: `Bearer ${answer.token}` });
    await res.body.dump();
    if (res.statusCode === 401 || res.statusCode === 403) throw refused(res.statusCode);
    return answer.refreshToken ? { identityToken: answer.refreshToken } : {};
  }

  /** A request to `path` under the repository, authorized; a 401 is answered once with a new token. */
  async send(method: string, path: string, opts: SendOptions = {}): Promise<Dispatcher.ResponseData> {
    await this.ping();
    const target = new URL(path.startsWith("http") ? path : path.startsWith("/v2/") ? `${this.opts.endpoint.url}${path}` : this.url(path));
    for (const [k, v] of Object.entries(opts.query ?? {})) target.searchParams.set(k, v);
    const scopes = [scopeOf(this.opts.repository, this.opts.actions), ...(opts.scopes ?? [])];
    let auth = await this.authorization(scopes, false);
    let res = await this.raw(method, target.toString(), { ...opts.headers, ...(auth ? { authorization: auth } : {}) }, opts.body);
    if (res.statusCode === 401 && (opts.replayable ?? !(opts.body instanceof Readable))) {
      const challenges = parseChallenges(res.headers["www-authenticate"]);
      await res.body.dump();
      if (challenges[0]) this.challenge = challenges[0];
      auth = await this.authorization(scopes, true);
      res = await this.raw(method, target.toString(), { ...opts.headers, ...(auth ? { authorization: auth } : {}) }, opts.body);
    }
    return res;
  }

  private async authorization(scopes: readonly string[], fresh: boolean): Promise<string | undefined> {
    const c = this.challenge;
    const creds = this.opts.credentials;
    if (creds?.registrytoken) return `Bearer ${creds.registrytoken}`;
    if (!c) return undefined;
    // Docker's client sends nothing without credentials for a basic challenge: it fails the request
    if (c.scheme === "basic") {
      if (creds && (creds.username || creds.password)) return basicHeader(creds);
      throw errors.registryNoBasicCredentials("");
    }
    if (fresh) this.opts.tokens.forget(c, scopes, creds);
    const { token } = await this.opts.tokens.token(c, scopes, creds, this.opts.dispatcher, { signal: this.opts.signal, fresh });
    return `Bearer ${token}`;
  }

  /** One HTTP exchange; network failures become ConnectError. Redirects are followed (blobs often live elsewhere). */
  private async raw(method: string, url: string, headers: Record<string, string>, body?: SendOptions["body"]): Promise<Dispatcher.ResponseData> {
    try {
      const res = await undici().request(url, {
        method: method as Dispatcher.HttpMethod,
        headers: { "user-agent": "engine", ...headers },
        body: body ?? undefined,
        dispatcher: this.opts.dispatcher,
        signal: this.opts.signal,
      });
      if ([301, 302, 303, 307, 308].includes(res.statusCode) && res.headers.location && method !== "PUT" && method !== "PATCH" && method !== "POST") {
        await res.body.dump();
        const next = new URL(String(res.headers.location), url).toString();
        // the token is for the registry, not for a storage backend it redirects to
        const sameOrigin = new URL(next).origin === new URL(url).origin;
        return this.raw(method, next, sameOrigin ? headers : { ...(headers.range ? { range: headers.range } : {}) });
      }
      return res;
    } catch (err) {
      if (this.opts.signal?.aborted) throw err;
      if (err instanceof EngineError) throw err;
      throw new ConnectError(url, err as Error);
    }
  }

  // --- manifests ---------------------------------------------------------------------------

  /** The manifest for a tag or digest; 404 and access errors explained. */
  async manifest(reference: string, accept: readonly string[]): Promise<{ body: Buffer; mediaType: string; digest?: string }> {
    const res = await this.send("GET", `/manifests/${reference}`, { headers: { accept: accept.join(", ") } });
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw this.failure(res.statusCode, body.toString(), `manifest ${reference}`);
    const digest = res.headers["docker-content-digest"];
    return { body, mediaType: String(res.headers["content-type"] ?? "").split(";")[0].trim(), digest: typeof digest === "string" ? digest : undefined };
  }

  async putManifest(reference: string, mediaType: string, body: Buffer): Promise<string | undefined> {
    const res = await this.send("PUT", `/manifests/${reference}`, { headers: { "content-type": mediaType }, body });
    const text = await res.body.text();
    if (res.statusCode !== 201 && res.statusCode !== 200) throw this.failure(res.statusCode, text, `manifest ${reference}`);
    const digest = res.headers["docker-content-digest"];
    return typeof digest === "string" ? digest : undefined;
  }

  async tags(): Promise<string[]> {
    const out: string[] = [];
    let path: string | undefined = "/tags/list";
    for (let page = 0; path && page < 100; page++) {
      const res: Dispatcher.ResponseData = await this.send("GET", path);
      const text = await res.body.text();
      if (res.statusCode !== 200) throw this.failure(res.statusCode, text, "tag list");
      out.push(...((JSON.parse(text) as { tags?: string[] }).tags ?? []));
      const link = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ""));
      path = link ? new URL(link[1], this.opts.endpoint.url).pathname + new URL(link[1], this.opts.endpoint.url).search : undefined;
    }
    return out;
  }

  // --- blobs ---------------------------------------------------------------------------------

  /** `GET` a blob from `offset`: 200 is the whole blob (the registry ignored the range), 206 the rest. */
  async blob(digest: string, offset = 0): Promise<Dispatcher.ResponseData> {
    const res = await this.send("GET", `/blobs/${digest}`, { headers: offset > 0 ? { range: `bytes=${offset}-` } : {} });
    if (res.statusCode !== 200 && res.statusCode !== 206) {
      const text = await res.body.text();
      throw this.failure(res.statusCode, text, `blob ${digest}`);
    }
    return res;
  }

  /** The blob's size when the repository has it. */
  async blobSize(digest: string): Promise<number | undefined> {
    const res = await this.send("HEAD", `/blobs/${digest}`);
    await res.body.dump();
    if (res.statusCode === 404) return undefined;
    if (res.statusCode !== 200) throw this.failure(res.statusCode, "", `blob ${digest}`);
    return Number(res.headers["content-length"] ?? 0);
  }

  /** Mounts a blob from another repository of the same registry; false when it could not. */
  async mount(digest: string, from: string): Promise<{ mounted: boolean; location?: string }> {
    const res = await this.send("POST", "/blobs/uploads/", { query: { mount: digest, from }, scopes: [scopeOf(from, ["pull"])] });
    await res.body.dump();
    if (res.statusCode === 201) return { mounted: true };
    // 202: the registry could not mount and opened an upload instead
    if (res.statusCode === 202) return { mounted: false, location: String(res.headers.location ?? "") };
    return { mounted: false };
  }

  /** Opens an upload; resolves with its location. */
  async startUpload(): Promise<string> {
    const res = await this.send("POST", "/blobs/uploads/");
    const text = await res.body.text();
    if (res.statusCode !== 202) throw this.failure(res.statusCode, text, "blob upload");
    return String(res.headers.location ?? "");
  }

  /** Sends one chunk (`PATCH`); resolves with the next location. */
  async uploadChunk(location: string, chunk: Buffer, offset: number): Promise<string> {
    const res = await this.send("PATCH", location, {
      headers: { "content-type": "application/octet-stream", "content-range": `${offset}-${offset + chunk.length - 1}`, "content-length": String(chunk.length) },
      body: chunk,
    });
    const text = await res.body.text();
    if (res.statusCode !== 202) throw this.failure(res.statusCode, text, "blob upload");
    return String(res.headers.location ?? location);
  }

  /** Completes an upload (`PUT ?digest=`), with the last bytes when given (monolithic when it is all). */
  async finishUpload(location: string, digest: string, last?: Buffer): Promise<void> {
    const res = await this.send("PUT", location, {
      query: { digest },
      headers: { "content-type": "application/octet-stream", "content-length": String(last?.length ?? 0) },
      body: last ?? Buffer.alloc(0),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw this.failure(res.statusCode, text, `blob ${digest}`);
  }

  /** An error for a registry answer: access, not found and the rest. */
  failure(status: number, text: string, what: string): EngineError {
    const message = registryMessage(text) ?? `${status} answered for ${what}`;
    if (status === 401 || status === 403) return errors.registryUnauthorized(message);
    if (status === 404) return errors.registryNotFound(what, message);
    return errors.registryError(what, message);
  }
}
