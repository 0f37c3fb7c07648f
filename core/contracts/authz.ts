/**
 * The authorization contract: who may do what through the API.
 *
 * Vocabulary
 * - chain: the plugins named by `--authorization-plugin`, in the operator's order. Each request
 *   is judged by the chain that was in force when it arrived, for its request and its response
 *   check, even if a reload swaps the chain meanwhile.
 * - request check: runs for every API request after its body is read and before its handler.
 *   While any plugin is active, a JSON body larger than AUTHZ_MAX_BODY is refused (413) before
 *   it: a request is never run with a body no plugin could see.
 * - response check: runs for every answer to a request the chain judged, before it is sent;
 *   not after a request denial, not for hijacked streams such as attach (their bytes never
 *   pass through a reply), and not for the few answers given before the request check (an
 *   unsupported API version, a body over the size limits), where no handler ran.
 * - decision: a plugin returns `undefined` to allow (it has no objection) or a denial. The chain
 *   asks plugins in order; the first denial wins and the rest are not asked.
 * - denial: `{ plugin, message }` answers 403 `authorization denied by plugin <plugin>:
 *   <message>`; with `failed: true` the plugin could not decide (down, timed out, broken
 *   answer) and the answer is 403 `plugin <plugin> failed with error: <message>`. Either way
 *   the request does not run: authorization fails closed.
 * - user: the common name of the client's TLS certificate, when it presented one.
 *
 * Kinds of plugin
 * - in-process: a module whose `apply` taps `hooks.authorizeRequest` / `authorizeResponse`
 *   (see `plugins/authz-readonly`); header names are Node's, lower case.
 * - out-of-process: a server speaking the authorization plugin protocol over HTTP (unix socket
 *   or TCP), found by name or spec file; `host/authz-remote/README.md` describes the protocol.
 *
 * Lifecycle
 *   at start, each `--authorization-plugin` is found (a name found nowhere stops the start) and
 *   applied with authorization hooks of its own (host/authz-chain.ts) -> per request: request
 *   check through the chain -> handler -> response check -> on a reload (SIGHUP) with another
 *   list, the new chain is built and swapped in at once, and swapped back if the reload fails;
 *   a request keeps the chain it arrived under.
 *
 * What a plugin never sees: the headers that carry credentials (`Authorization`,
 * `X-Registry-Auth`, `X-Registry-Config`) and the bodies of `/auth` (a login's password).
 * A body is passed when it is JSON (at most `AUTHZ_MAX_BODY` bytes: a larger one is refused).
 * Bodies of other types (image and build tars, `docker cp` archives) are not passed, as with
 * Docker's daemon: plugins judge those requests by method, URI and headers.
 */

export const AUTHZ_MAX_BODY = 1024 * 1024;

export interface AuthzRequest {
  /** The client's TLS certificate common name, or "" when none was presented. */
  user: string;
  /** "TLS" when `user` comes from a client certificate, else "". */
  userAuthNMethod: string;
  method: string;
  /**
   * The route the router matched, not the raw bytes: `/v1.51/containers/create?name=x` for
   * `/v1.51//%63ontainers/create/?name=x` (parameters decoded, slashes single, none at the end;
   * the version prefix when the client gave one; the query as sent).
   */
  uri: string;
  headers: Record<string, string>;
  /** The JSON body, when there is one of at most AUTHZ_MAX_BODY bytes. */
  body?: Buffer;
  /** The client's certificate chain in PEM, leaf first, when it presented one. */
  peerCertificates?: string[];
}

export interface AuthzResponse {
  /** The request this answers, as the request check saw it. */
  request: AuthzRequest;
  statusCode: number;
  headers: Record<string, string>;
  /** The answer's body when it is JSON and small enough; absent for streams. */
  body?: Buffer;
}

export interface AuthzDenial {
  /** The plugin that said no, as named in the error the client sees. */
  plugin: string;
  message: string;
  /** The plugin could not give an answer (unreachable, timed out, an error of its own). */
  failed?: boolean;
}
