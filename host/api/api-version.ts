/**
 * API versions in paths. `/v1.41/info` is `/info` asked at version 1.41; a path without a
 * version means the newest. The version is taken off the URL before routing (so every route
 * is declared once) and checked in `onRequest`, where the answer can be a 400.
 */
import type { IncomingMessage } from "node:http";
import { API_VERSION, compareApiVersions, MIN_API_VERSION } from "../../core/version.js";
import { errors } from "../../core/errors.js";

const VERSIONED = /^\/v(\d+\.\d+)(?=[/?]|$)/;
const REQUESTED = Symbol("engine.apiVersion");

type WithVersion = IncomingMessage & { [REQUESTED]?: string };

/** Fastify's `rewriteUrl`: strips `/vX.Y` and remembers it on the raw request. */
export function rewriteVersionedUrl(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const m = VERSIONED.exec(url);
  if (!m) return url;
  (req as WithVersion)[REQUESTED] = m[1];
  const rest = url.slice(m[0].length);
  return rest === "" || rest.startsWith("?") ? `/${rest}` : rest;
}

/** The version the client asked for, or the newest when it named none. */
export function requestedApiVersion(req: IncomingMessage): string {
  return (req as WithVersion)[REQUESTED] ?? API_VERSION;
}

/** Throws the Docker-worded 400 when the version is out of the supported range. */
export function checkApiVersion(req: IncomingMessage): void {
  const version = (req as WithVersion)[REQUESTED];
  if (version === undefined) return;
  if (compareApiVersions(version, MIN_API_VERSION) < 0) throw errors.apiVersionTooOld(version, MIN_API_VERSION);
  if (compareApiVersions(version, API_VERSION) > 0) throw errors.apiVersionTooNew(version, API_VERSION);
}
