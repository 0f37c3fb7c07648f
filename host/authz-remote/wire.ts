/**
 * The JSON bodies of `AuthZPlugin.AuthZReq` and `AuthZPlugin.AuthZRes`, in the shape plugins
 * written for Docker's daemon read: Go field names, bodies and certificates as base64 (Go's
 * encoding of bytes), header names in Go's canonical form (`Content-Type`), empty fields left
 * out.
 */
import type { AuthzRequest, AuthzResponse } from "../../core/contracts/authz.js";

export interface WireRequest {
  User?: string;
  UserAuthNMethod?: string;
  RequestMethod?: string;
  RequestUri?: string;
  RequestBody?: string;
  RequestHeaders?: Record<string, string>;
  RequestPeerCertificates?: string[];
  ResponseStatusCode?: number;
  ResponseBody?: string;
  ResponseHeaders?: Record<string, string>;
}

/** The plugin's verdict. */
export interface WireAnswer {
  Allow: boolean;
  Msg?: string;
  Err?: string;
}

export function requestToWire(req: AuthzRequest): WireRequest {
  return omitEmpty({
    User: req.user,
    UserAuthNMethod: req.userAuthNMethod,
    RequestMethod: req.method,
    RequestUri: req.uri,
    RequestBody: req.body?.toString("base64"),
    RequestHeaders: canonicalHeaders(req.headers),
    RequestPeerCertificates: req.peerCertificates?.map((pem) => Buffer.from(pem).toString("base64")),
  });
}

export function responseToWire(res: AuthzResponse): WireRequest {
  return omitEmpty({
    ...requestToWire(res.request),
    ResponseStatusCode: res.statusCode,
    ResponseBody: res.body?.toString("base64"),
    ResponseHeaders: canonicalHeaders(res.headers),
  });
}

/** Checks an answer's shape; a plugin that answers something else has failed. */
export function answerFromWire(value: unknown): WireAnswer {
  const answer = value as Partial<WireAnswer> | null;
  if (!answer || typeof answer !== "object" || typeof answer.Allow !== "boolean") {
    throw new Error(`the answer has no boolean "Allow": ${JSON.stringify(value)?.slice(0, 200)}`);
  }
  return { Allow: answer.Allow, Msg: typeof answer.Msg === "string" ? answer.Msg : "", Err: typeof answer.Err === "string" ? answer.Err : "" };
}

/** `content-type` -> `Content-Type`, as Go's net/http names headers. */
function canonicalHeaderName(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
}

function canonicalHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[canonicalHeaderName(name)] = value;
  return out;
}

function omitEmpty<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === "" || v === 0) continue;
    if (typeof v === "object" && v !== null && Object.keys(v).length === 0) continue;
    out[key] = v;
  }
  return out as T;
}
