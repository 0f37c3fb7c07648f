/**
 * Runs every API request and answer through the authorization hooks. With no plugin tapped
 * this costs nothing (the hooks are not called); with plugins, the request check runs before
 * the handler and the response check before the answer is written.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { TLSSocket } from "node:tls";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AUTHZ_MAX_BODY, type AuthzRequest } from "../../core/contracts/authz.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";

/** Headers that carry credentials never reach a plugin. */
const HIDDEN_HEADERS = new Set(["authorization", "x-registry-auth"]);

declare module "fastify" {
  interface FastifyRequest {
    /** The JSON body as it arrived, kept for authorization plugins. */
    rawJsonBody?: Buffer;
    authzRequest?: AuthzRequest;
  }
}

export function installAuthorization(app: FastifyInstance, hooks: EngineHooks): void {
  app.addHook("preHandler", async (request) => {
    if (!hooks.authorizeRequest.isUsed()) return;
    const authz = authzRequestOf(request);
    request.authzRequest = authz;
    const denial = await hooks.authorizeRequest.promise(authz);
    if (denial) throw errors.authzDenied(denial.plugin, denial.message);
  });

  app.addHook("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (!hooks.authorizeResponse.isUsed()) return payload;
    const authz = request.authzRequest ?? authzRequestOf(request);
    const denial = await hooks.authorizeResponse.promise({
      ...authz,
      statusCode: reply.statusCode,
      responseHeaders: flatten(reply.getHeaders() as IncomingHttpHeaders),
      responseBody: jsonPayload(reply, payload),
    });
    if (!denial) return payload;
    const err = errors.authzResponseDenied(denial.plugin, denial.message);
    reply.code(err.statusCode).type("application/json");
    return JSON.stringify({ message: err.message }) + "\n";
  });
}

function authzRequestOf(request: FastifyRequest): AuthzRequest {
  const socket = request.raw.socket as Partial<TLSSocket>;
  const cert = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined;
  const commonName = cert && typeof cert.subject?.CN === "string" ? cert.subject.CN : "";
  return {
    user: commonName,
    userAuthNMethod: commonName ? "TLS" : "",
    method: request.method,
    uri: request.originalUrl,
    headers: flatten(request.headers),
    body: request.rawJsonBody && request.rawJsonBody.length <= AUTHZ_MAX_BODY ? request.rawJsonBody : undefined,
  };
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
