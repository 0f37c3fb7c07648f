/**
 * The authorization contract: who may do what through the API.
 *
 * Vocabulary
 * - request check: runs for every API request after its body is read and before its handler.
 * - response check: runs for every answer before it is sent.
 * - decision: a plugin returns `undefined` to allow (it has no objection) or a denial with a
 *   message. The chain runs plugins in the order the operator listed them; the first denial
 *   wins and the rest are not asked.
 * - user: the common name of the client's TLS certificate, when it presented one.
 *
 * Headers that carry credentials (`Authorization`, `X-Registry-Auth`) are removed before a
 * plugin sees them. A body is passed only when it is JSON and at most `AUTHZ_MAX_BODY` bytes.
 */

export const AUTHZ_MAX_BODY = 1024 * 1024;

export interface AuthzRequest {
  /** The client's TLS certificate common name, or "" when none was presented. */
  user: string;
  /** "TLS" when `user` comes from a client certificate, else "". */
  userAuthNMethod: string;
  method: string;
  /** The request URI as the client sent it, with its API version prefix. */
  uri: string;
  headers: Record<string, string>;
  /** The JSON body, when there is one of at most AUTHZ_MAX_BODY bytes. */
  body?: Buffer;
}

export interface AuthzResponse extends AuthzRequest {
  statusCode: number;
  responseHeaders: Record<string, string>;
  /** The answer's body when it is JSON and small enough; absent for streams. */
  responseBody?: Buffer;
}

export interface AuthzDenial {
  /** The plugin that said no, as named in the error the client sees. */
  plugin: string;
  message: string;
}
