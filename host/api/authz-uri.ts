/**
 * The URI an authorization plugin judges: the route the router matched, not the bytes the
 * client sent. The router forgives doubled and trailing slashes and decodes percent-encoded path
 * characters (`/v1.51/%63ontainers/create` runs the create route), so a plugin that matched the
 * raw URI (`/containers/create`) could be walked around. The plugin is given the matched route's
 * path with its parameters filled in (decoded, as the route sees them), behind the API version
 * the client asked for, and the query as sent; a path no route matched (answered 404) is given
 * with its slashes collapsed and its unreserved characters decoded.
 */
import type { FastifyRequest } from "fastify";
import { requestedApiVersion } from "./api-version.js";

export function authzUri(request: FastifyRequest): string {
  const raw = request.originalUrl;
  const q = raw.indexOf("?");
  const query = q === -1 ? "" : raw.slice(q);
  const pattern = request.routeOptions.url;
  if (!pattern) return `${normalisePath(raw.slice(0, q === -1 ? raw.length : q))}${query}`;
  return `${versionPrefix(request)}${fillPattern(pattern, request.params as Record<string, string | undefined>)}${query}`;
}

/** `/v1.51` when the client named a version, as routes are declared without it. */
function versionPrefix(request: FastifyRequest): string {
  const raw = request.originalUrl;
  if (!/^\/v\d+\.\d+(?=[/?]|$)/.test(raw)) return "";
  return `/v${requestedApiVersion(request.raw)}`;
}

/**
 * `/containers/:id/start` with `id` = `web` gives `/containers/web/start`. A parameter's `?`,
 * `#` and `%` stay encoded (decoded they would start a query or an escape that is not there),
 * and so does a named parameter's `/` (it would add a segment); a wildcard's `/` is its own.
 */
function fillPattern(pattern: string, params: Record<string, string | undefined>): string {
  return pattern
    .split("/")
    .map((segment) => {
      if (segment === "*") return encodeStructural(params["*"] ?? "", false);
      if (segment.startsWith(":")) return encodeStructural(params[segment.slice(1)] ?? "", true);
      return segment;
    })
    .join("/");
}

function encodeStructural(value: string, slash: boolean): string {
  return value.replace(slash ? /[%?#/]/g : /[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/** For a path no route matched: one slash between segments, none at the end, unreserved characters plain. */
function normalisePath(path: string): string {
  const decoded = path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(c) ? c : escape.toUpperCase();
  });
  const collapsed = decoded.replace(/\/{2,}/g, "/");
  return collapsed.length > 1 ? collapsed.replace(/\/$/, "") : collapsed;
}
