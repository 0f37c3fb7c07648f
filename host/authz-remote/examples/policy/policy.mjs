/**
 * The example policy, shared by the out-of-process server (server.mjs) and the in-process
 * module (in-process.mjs): plain JavaScript with no dependencies, to copy and change.
 *   - names listed in `readOnlyUsers` (TLS certificate common names) may only read;
 *   - no privileged containers (`docker run --privileged`, `docker exec --privileged`);
 *   - no bind mount of the host's `/` (`-v /:/host`, `--mount type=bind,source=/`).
 */
import { posix } from "node:path";

export const DEFAULT_POLICY = { readOnlyUsers: [], denyPrivileged: true, denyRootBind: true };

/**
 * Judges one API request: `{ method, uri, user, body }` with `body` the parsed JSON (or
 * undefined). Returns undefined to allow, or the reason to deny.
 */
export function judge(policy, { method, uri, user, body }) {
  const path = apiPath(uri);
  if (user && policy.readOnlyUsers.includes(user) && method !== "GET" && method !== "HEAD") {
    return `${user} may only read`;
  }
  if (!body || typeof body !== "object") return undefined;
  if (method === "POST" && path === "/containers/create") {
    const host = body.HostConfig ?? {};
    if (policy.denyPrivileged && host.Privileged === true) return "privileged containers are not allowed";
    if (policy.denyRootBind && bindsRoot(host)) return "bind mounts of / are not allowed";
  }
  if (method === "POST" && /^\/containers\/[^/]+\/exec$/.test(path) && policy.denyPrivileged && body.Privileged === true) {
    return "privileged exec sessions are not allowed";
  }
  return undefined;
}

/** `/v1.51/containers/create?name=x` -> `/containers/create`. */
function apiPath(uri) {
  return uri.split("?")[0].replace(/^\/v\d+\.\d+(?=\/)/, "");
}

function bindsRoot(host) {
  const sources = [
    ...(host.Binds ?? []).map((bind) => bind.split(":")[0]),
    ...(host.Mounts ?? []).filter((m) => m.Type === "bind").map((m) => m.Source),
  ];
  return sources.some((source) => typeof source === "string" && source.startsWith("/") && posix.normalize(source) === "/");
}
