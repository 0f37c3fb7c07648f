#!/usr/bin/env node
/**
 * policy-server: an example authorization plugin for engined, in one file with no
 * dependencies, written to be copied. It speaks the authorization plugin protocol (JSON over
 * HTTP on a unix socket or TCP) and enforces a small policy:
 *   - certificate names listed in `readOnlyUsers` may only read (GET and HEAD);
 *   - no privileged containers (`docker run --privileged`, `docker exec --privileged`);
 *   - no bind mount of the host's `/` (`-v /:/host`, `--mount type=bind,source=/`).
 *
 *   node server.mjs [--socket PATH | --listen HOST:PORT] [--policy FILE]
 *
 * The default socket is /run/engine/plugins/policy.sock, where engined finds a plugin named
 * `policy` (`--authorization-plugin policy`). See README.md.
 */
import { createServer } from "node:http";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, posix } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    socket: { type: "string" },
    listen: { type: "string" },
    policy: { type: "string" },
  },
});

const DEFAULT_POLICY = { readOnlyUsers: [], denyPrivileged: true, denyRootBind: true };
const policy = { ...DEFAULT_POLICY, ...(args.policy ? JSON.parse(readFileSync(args.policy, "utf8")) : {}) };

// --- the policy ------------------------------------------------------------------------------

/** Returns undefined to allow, or the reason to deny. */
function judgeRequest(req) {
  const method = req.RequestMethod ?? "";
  const path = apiPath(req.RequestUri ?? "");
  if (req.User && policy.readOnlyUsers.includes(req.User) && method !== "GET" && method !== "HEAD") {
    return `${req.User} may only read`;
  }
  const body = jsonBody(req.RequestBody);
  if (!body) return undefined;
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

/** The request body: base64 of JSON, sent only when it is JSON and at most 1 MiB. */
function jsonBody(base64) {
  if (!base64) return undefined;
  try {
    return JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
  } catch {
    return undefined;
  }
}

function bindsRoot(host) {
  const sources = [
    ...(host.Binds ?? []).map((bind) => bind.split(":")[0]),
    ...(host.Mounts ?? []).filter((m) => m.Type === "bind").map((m) => m.Source),
  ];
  return sources.some((source) => typeof source === "string" && source.startsWith("/") && posix.normalize(source) === "/");
}

// --- the protocol ----------------------------------------------------------------------------

const MEDIA_TYPE = "application/vnd.docker.plugins.v1.2+json";

const handlers = {
  // engined asks once, before the first verdict: which interfaces this plugin implements.
  "/Plugin.Activate": () => ({ Implements: ["authz"] }),
  // Every API request, before it runs.
  "/AuthZPlugin.AuthZReq": (req) => {
    const reason = judgeRequest(req);
    log(reason ? "deny" : "allow", req, reason);
    return reason ? { Allow: false, Msg: reason } : { Allow: true };
  },
  // Every answer, before it is sent: this policy has nothing against any.
  "/AuthZPlugin.AuthZRes": () => ({ Allow: true }),
};

function log(verdict, req, reason) {
  const who = req.User ? ` user=${req.User}` : "";
  process.stdout.write(`${verdict} ${req.RequestMethod} ${req.RequestUri}${who}${reason ? `: ${reason}` : ""}\n`);
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const handler = handlers[request.url];
    let status = 200;
    let answer;
    if (request.method !== "POST" || !handler) {
      status = 404;
      answer = { Err: `unknown method ${request.method} ${request.url}` };
    } else {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        answer = handler(text ? JSON.parse(text) : {});
      } catch (err) {
        // An error is not a verdict: engined refuses the request and reports it.
        status = 500;
        answer = { Err: `policy-server: ${err.message}` };
      }
    }
    response.writeHead(status, { "content-type": MEDIA_TYPE });
    response.end(JSON.stringify(answer));
  });
});

let socketPath;
if (args.listen) {
  const at = args.listen.lastIndexOf(":");
  server.listen(Number(args.listen.slice(at + 1)), args.listen.slice(0, at).replace(/^\[|\]$/g, ""), ready);
} else {
  socketPath = args.socket ?? "/run/engine/plugins/policy.sock";
  mkdirSync(dirname(socketPath), { recursive: true });
  rmSync(socketPath, { force: true });
  server.listen(socketPath, ready);
}

function ready() {
  const where = socketPath ?? `${server.address().address}:${server.address().port}`;
  process.stdout.write(`policy-server listening on ${where}\n`);
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    if (socketPath) rmSync(socketPath, { force: true });
    process.exit(0);
  });
}
