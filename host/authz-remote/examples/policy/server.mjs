#!/usr/bin/env node
/**
 * The example policy (policy.mjs) as an authorization plugin server: plain Node.js with no
 * dependencies, written to be copied. It speaks the authorization plugin protocol, JSON over
 * HTTP on a unix socket or TCP.
 *
 *   node server.mjs [--socket PATH | --listen HOST:PORT] [--policy FILE]
 *
 * The default socket is /run/engine/plugins/policy.sock, where engined finds a plugin named
 * `policy` (`--authorization-plugin policy`). See README.md.
 */
import { createServer } from "node:http";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_POLICY, judge } from "./policy.mjs";

const { values: args } = parseArgs({
  options: {
    socket: { type: "string" },
    listen: { type: "string" },
    policy: { type: "string" },
  },
});

const policy = { ...DEFAULT_POLICY, ...(args.policy ? JSON.parse(readFileSync(args.policy, "utf8")) : {}) };

/** The request body: base64 of JSON, sent only when it is JSON and at most 1 MiB. */
function jsonBody(base64) {
  if (!base64) return undefined;
  try {
    return JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
  } catch {
    return undefined;
  }
}

// --- the protocol ----------------------------------------------------------------------------

const MEDIA_TYPE = "application/vnd.docker.plugins.v1.2+json";

const handlers = {
  // engined asks once, before the first verdict: which interfaces this plugin implements.
  "/Plugin.Activate": () => ({ Implements: ["authz"] }),
  // Every API request, before it runs.
  "/AuthZPlugin.AuthZReq": (req) => {
    const reason = judge(policy, { method: req.RequestMethod ?? "", uri: req.RequestUri ?? "", user: req.User, body: jsonBody(req.RequestBody) });
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
