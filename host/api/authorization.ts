/**
 * Runs every API request and answer through the authorization hooks. With no plugin tapped
 * this costs nothing (the hooks are not called); with plugins, the request check runs before
 * the handler and the response check before the answer is written. A request the chain
 * denied is answered at once: its 403 is not put to the response check.
 *
 * Authorization fails closed: while a plugin is active, a JSON body too large to show it
 * (AUTHZ_MAX_BODY) is refused with 413 before any handler runs (Docker's daemon lets it through
 * unjudged), by its Content-Length before the body is read, or by its size once read when it
 * came chunked. Plugins judge the URI the router matched (authz-uri.ts), not the raw one.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { PeerCertificate, TLSSocket } from "node:tls";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AUTHZ_MAX_BODY, type AuthzDenial, type AuthzRequest } from "../../core/contracts/authz.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { authzUri } from "./authz-uri.js";

/** Headers that carry credentials never reach a plugin. */
const HIDDEN_HEADERS = new Set(["authorization", "x-registry-auth", "x-registry-config"]);

declare module "fastify" {
  interface FastifyRequest {
    /** The JSON body as it arrived, kept for authorization plugins. */
    rawJsonBody?: Buffer;
    authzRequest?: AuthzRequest;
    /** The request check denied it: its answer is the denial, not checked again. */
    authzDenied?: boolean;
    /** The body was declared JSON and is not; the error answers after the request check. */
    badJson?: Error;
  }
}

export function installAuthorization(app: FastifyInstance, hooks: EngineHooks): void {
  const active = () => hooks.authorizeRequest.isUsed() || hooks.authorizeResponse.isUsed();
  app.addHook("preParsing", async (request) => {
    if (!active() || !isJson(request) || isLogin(request)) return;
    const declared = Number(request.headers["content-length"]);
    if (declared > AUTHZ_MAX_BODY) throw errors.authzBodyTooLarge(declared, AUTHZ_MAX_BODY);
  });

  app.addHook("preHandler", async (request) => {
    if (!active()) return;
    const size = request.rawJsonBody?.length ?? 0;
    if (size > AUTHZ_MAX_BODY && !isLogin(request)) throw errors.authzBodyTooLarge(size, AUTHZ_MAX_BODY);
    const authz = authzRequestOf(request);
    request.authzRequest = authz;
    if (!hooks.authorizeRequest.isUsed()) return;
    const denial = await hooks.authorizeRequest.promise(authz);
    if (!denial) return;
    request.authzDenied = true;
    throw denialError(denial);
  });

  app.addHook("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    // Answers to requests the chain never saw (an unsupported API version, a body over the
    // limit: refused before any handler could run) and to denied requests are not put to it.
    const authz = request.authzRequest;
    if (!authz || request.authzDenied || !hooks.authorizeResponse.isUsed()) return payload;
    const denial = await hooks.authorizeResponse.promise({
      request: authz,
      statusCode: reply.statusCode,
      headers: flatten(reply.getHeaders() as IncomingHttpHeaders),
      body: isLogin(request) ? undefined : jsonPayload(reply, payload),
    });
    if (!denial) return payload;
    const err = denial.failed ? errors.authzPluginFailed(denial.plugin, denial.message) : errors.authzResponseDenied(denial.plugin, denial.message);
    reply.code(err.statusCode).type("application/json");
    return JSON.stringify({ message: err.message }) + "\n";
  });
}

function denialError(denial: AuthzDenial) {
  return denial.failed ? errors.authzPluginFailed(denial.plugin, denial.message) : errors.authzDenied(denial.plugin, denial.message);
}

function authzRequestOf(request: FastifyRequest): AuthzRequest {
  const socket = request.raw.socket as Partial<TLSSocket>;
  const cert = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate(true) : undefined;
  const commonName = cert && typeof cert.subject?.CN === "string" ? cert.subject.CN : "";
  const uri = authzUri(request);
  const body = request.rawJsonBody;
  return {
    user: commonName,
    userAuthNMethod: commonName ? "TLS" : "",
    method: request.method,
    uri,
    headers: flatten(request.headers),
    body: body && body.length > 0 && !isLogin(request) ? body : undefined,
    peerCertificates: commonName ? chainPem(cert!) : undefined,
  };
}

/** The body goes to the JSON parser (and so to the plugins), whatever the type's case and parameters. */
function isJson(request: FastifyRequest): boolean {
  const type = request.headers["content-type"];
  return typeof type === "string" && type.split(";")[0].trim().toLowerCase() === "application/json";
}

/** `/auth` (however the client spelled it) carries a registry password in its body, and its answer a token. */
function isLogin(request: FastifyRequest): boolean {
  return request.routeOptions.url === "/auth";
}

/** The presented chain, leaf first, in PEM: what a plugin needs to check it itself. */
function chainPem(leaf: PeerCertificate & { issuerCertificate?: PeerCertificate }): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (let cert: typeof leaf | undefined = leaf; cert?.raw && !seen.has(cert.fingerprint256); cert = cert.issuerCertificate) {
    seen.add(cert.fingerprint256);
    const base64 = cert.raw.toString("base64").replace(/.{64}/g, "$&\n");
    out.push(`-----BEGIN CERTIFICATE-----\n${base64.replace(/\n$/, "")}\n-----END CERTIFICATE-----\n`);
  }
  return out;
}

function flatten(headers: IncomingHttpHeaders | Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name.toLowerCase())) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

function jsonPayload(reply: FastifyReply, payload: unknown): Buffer | undefined {
  const type = String(reply.getHeader("content-type") ?? "");
  if (!type.startsWith("application/json")) return undefined;
  const body = typeof payload === "string" ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
  return body && body.length <= AUTHZ_MAX_BODY ? body : undefined;
}
