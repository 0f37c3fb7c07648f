/**
 * A real token server for the distribution registry's token authentication
 * (https://distribution.github.io/distribution/spec/auth/token/): a small Node HTTP server on
 * 127.0.0.1 that answers `GET /token` (basic credentials, or none for anonymous access) and
 * `POST /token` (the OAuth2 form: password and refresh_token grants) with RS256 JWTs the
 * registry verifies against a self-signed certificate made with openssl (its PEM is the
 * registry's `auth.token.rootcertbundle`; the token header carries it as `x5c`).
 *
 * Expiry: registry 2.8.2 accepts a token for 60 s after its `exp` (and 60 s before its `nbf`),
 * its "leeway" for clock skew. So that a test can make a token really expire within seconds,
 * `tokenLifetimeSeconds` is the lifetime as the registry sees it: `exp = now + lifetime - 60`,
 * `nbf = now - 60`. `advertisedExpiresIn` is what the answer's `expires_in` claims, so a test
 * can make a client believe a token lives longer than it does.
 */
import { execFileSync } from "node:child_process";
import { createPrivateKey, randomBytes, sign, type KeyObject } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { makeTempDir } from "./engined.js";

export const TOKEN_SERVICE = "test-registry";
export const TOKEN_ISSUER = "test-issuer";
/** The registry's tolerance for `exp` and `nbf`, in seconds (distribution's token.Leeway). */
export const REGISTRY_LEEWAY_SECONDS = 60;

export interface TokenRequest {
  method: string;
  scope: string[];
  service?: string;
  account?: string;
  /** The user the credentials (basic or refresh token) proved; undefined for anonymous. */
  user?: string;
  /** The OAuth2 grant_type of a POST. */
  grant?: string;
  /** What the server answered. */
  status: number;
}

export interface AccessEntry {
  type: string;
  name: string;
  actions: string[];
}

export interface TokenServerOptions {
  users?: { username: string; password: string }[];
  /** The real lifetime of a token, as the registry sees it (default 300). */
  tokenLifetimeSeconds?: number;
  /** What `expires_in` says (default: tokenLifetimeSeconds). */
  advertisedExpiresIn?: number;
  /** Refuse tokens to requests without credentials (401); by default anonymous gets what it asks. */
  requireLogin?: boolean;
  /** Which of the requested actions to grant (default: all of them). */
  grant?: (user: string | undefined, access: AccessEntry) => string[];
}

export interface TokenServer {
  url: string;
  requests: TokenRequest[];
  /** How many tokens it handed out. */
  issued: number;
  /** The signing certificate (PEM), the registry's rootcertbundle. */
  certPem: string;
  /** A file holding certPem. */
  certPath: string;
  /** Mutable: the next tokens follow the new values. */
  options: Required<Omit<TokenServerOptions, "grant">> & Pick<TokenServerOptions, "grant">;
  /** Makes a token directly (for tests that need one without the HTTP round trip). */
  makeToken(user: string | undefined, access: AccessEntry[]): string;
  stop(): Promise<void>;
}

const running = new Set<TokenServer>();

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/** `repository:foo/bar:pull,push` -> entry; the name may itself hold colons (host:port/name). */
export function parseScope(scope: string): AccessEntry | undefined {
  const first = scope.indexOf(":");
  const last = scope.lastIndexOf(":");
  if (first < 0 || last === first) return undefined;
  return { type: scope.slice(0, first), name: scope.slice(first + 1, last), actions: scope.slice(last + 1).split(",").filter(Boolean) };
}

export async function startTokenServer(opts: TokenServerOptions = {}): Promise<TokenServer> {
  const dir = makeTempDir("engine-token-");
  // A self-signed RSA certificate: the registry trusts the token's x5c chain when it ends in
  // one of its rootcertbundle certificates; a self-signed leaf that is itself the root does.
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-token-signer",
    "-keyout", "signer-key.pem", "-out", "signer.pem"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const certPath = join(dir, "signer.pem");
  const certPem = readFileSync(certPath, "utf8");
  const key: KeyObject = createPrivateKey(readFileSync(join(dir, "signer-key.pem")));
  const certDer = Buffer.from(certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
  const header = b64url(JSON.stringify({ typ: "JWT", alg: "RS256", x5c: [certDer.toString("base64")] }));

  const lifetime = opts.tokenLifetimeSeconds ?? 300;
  const options: TokenServer["options"] = {
    users: opts.users ?? [],
    tokenLifetimeSeconds: lifetime,
    advertisedExpiresIn: opts.advertisedExpiresIn ?? lifetime,
    requireLogin: opts.requireLogin ?? false,
    grant: opts.grant,
  };
  // Opaque refresh tokens -> the user they were issued to.
  const refreshTokens = new Map<string, string>();

  function makeToken(user: string | undefined, access: AccessEntry[]): string {
    // Rounded up so the real lifetime is never shorter than asked.
    const now = Math.ceil(Date.now() / 1000);
    const claims = {
      iss: TOKEN_ISSUER,
      sub: user ?? "",
      aud: TOKEN_SERVICE,
      exp: now + options.tokenLifetimeSeconds - REGISTRY_LEEWAY_SECONDS,
      nbf: now - REGISTRY_LEEWAY_SECONDS,
      iat: now,
      jti: randomBytes(12).toString("hex"),
      access,
    };
    const input = `${header}.${b64url(JSON.stringify(claims))}`;
    // RSASSA-PKCS1-v1_5 with SHA-256 is what "RS256" names; node signs RSA keys that way by default.
    return `${input}.${sign("sha256", Buffer.from(input), key).toString("base64url")}`;
  }

  function grantFor(user: string | undefined, scopes: string[]): AccessEntry[] {
    const out: AccessEntry[] = [];
    for (const s of scopes) {
      const entry = parseScope(s);
      if (!entry) continue;
      const actions = options.grant ? options.grant(user, entry) : entry.actions;
      out.push({ ...entry, actions });
    }
    return out;
  }

  function checkBasic(req: IncomingMessage): { user?: string; bad: boolean } {
    const h = req.headers.authorization;
    if (!h) return { bad: false };
    const m = /^Basic\s+(\S+)$/i.exec(h);
    if (!m) return { bad: true };
    const text = Buffer.from(m[1], "base64").toString();
    const colon = text.indexOf(":");
    const [username, password] = colon < 0 ? [text, ""] : [text.slice(0, colon), text.slice(colon + 1)];
    const ok = options.users.some((u) => u.username === username && u.password === password);
    return ok ? { user: username, bad: false } : { bad: true };
  }

  function answer(res: ServerResponse, status: number, body: unknown, rec: TokenRequest): void {
    rec.status = status;
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  const unauthorized = (message: string) => ({ errors: [{ code: "UNAUTHORIZED", message, detail: null }] });

  function issue(res: ServerResponse, rec: TokenRequest, user: string | undefined, scopes: string[], refresh: boolean): void {
    const token = makeToken(user, grantFor(user, scopes));
    server.issued++;
    const body: Record<string, unknown> = {
      token,
      access_token: token,
      expires_in: options.advertisedExpiresIn,
      issued_at: new Date().toISOString(),
    };
    if (refresh && user !== undefined) {
      const rt = randomBytes(24).toString("hex");
      refreshTokens.set(rt, user);
      body.refresh_token = rt;
    }
    answer(res, 200, body, rec);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://token.invalid");
    const rec: TokenRequest = { method: req.method ?? "", scope: [], status: 0 };
    server.requests.push(rec);
    if (url.pathname !== "/token") return answer(res, 404, { errors: [{ code: "NOT_FOUND", message: "no such path" }] }, rec);

    if (req.method === "GET") {
      rec.scope = url.searchParams.getAll("scope");
      rec.service = url.searchParams.get("service") ?? undefined;
      rec.account = url.searchParams.get("account") ?? undefined;
      const { user, bad } = checkBasic(req);
      rec.user = user;
      if (bad) return answer(res, 401, unauthorized("bad credentials"), rec);
      if (!user && options.requireLogin) return answer(res, 401, unauthorized("login required"), rec);
      // Docker's GET flow gives a refresh token when asked with offline_token=true.
      return issue(res, rec, user, rec.scope, url.searchParams.get("offline_token") === "true");
    }

    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      // Scopes are space separated in OAuth2; accept repeated fields too.
      rec.scope = form.getAll("scope").flatMap((s) => s.split(" ")).filter(Boolean);
      rec.service = form.get("service") ?? undefined;
      rec.grant = form.get("grant_type") ?? undefined;
      rec.account = form.get("username") ?? undefined;
      const offline = form.get("access_type") === "offline";
      if (rec.grant === "password") {
        const username = form.get("username") ?? "";
        const ok = options.users.some((u) => u.username === username && u.password === (form.get("password") ?? ""));
        if (!ok) return answer(res, 401, unauthorized("bad credentials"), rec);
        rec.user = username;
        return issue(res, rec, username, rec.scope, true);
      }
      if (rec.grant === "refresh_token") {
        const user = refreshTokens.get(form.get("refresh_token") ?? "");
        if (user === undefined) return answer(res, 401, unauthorized("unknown refresh token"), rec);
        rec.user = user;
        return issue(res, rec, user, rec.scope, offline);
      }
      return answer(res, 400, { error: "unsupported_grant_type" }, rec);
    }
    return answer(res, 405, { errors: [{ code: "UNSUPPORTED", message: "method not allowed" }] }, rec);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (http.address() as AddressInfo).port;

  const server: TokenServer = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    issued: 0,
    certPem,
    certPath,
    options,
    makeToken,
    async stop() {
      running.delete(server);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  running.add(server);
  return server;
}

/** Stops every token server still running (the registry module's root hook calls it). */
export async function stopAllTokenServers(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}
