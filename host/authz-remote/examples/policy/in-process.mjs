/**
 * The example policy as an in-process plugin: a module engined imports and applies, whose
 * taps judge each request without leaving the daemon (no socket, no extra process). Enable it
 * by path: `--authorization-plugin /path/to/in-process.mjs`. It enforces DEFAULT_POLICY; for
 * another policy, write a module of your own that exports `policyPlugin({...})` as default:
 *
 *   import { policyPlugin } from "/opt/engine-policy/in-process.mjs";
 *   export default policyPlugin({ readOnlyUsers: ["monitoring"] });
 *
 * The manifest id must be `authz.<name>`; denials are reported under `<name>`.
 */
import { DEFAULT_POLICY, judge } from "./policy.mjs";

export function policyPlugin(overrides = {}, name = "policy") {
  const policy = { ...DEFAULT_POLICY, ...overrides };
  return {
    manifest: {
      id: `authz.${name}`,
      kind: "authz",
      description: "No privileged containers, no bind mount of /, read-only certificate names",
    },
    apply(hooks, ctx) {
      hooks.authorizeRequest.tap(`authz.${name}`, (request) => {
        const reason = judge(policy, { ...request, body: parse(request.body) });
        if (reason) ctx.log.info({ method: request.method, uri: request.uri, user: request.user }, `denied: ${reason}`);
        return reason ? { plugin: name, message: reason } : undefined;
      });
    },
  };
}

/** The request's body, when it is JSON of at most 1 MiB (else the daemon does not pass it). */
function parse(body) {
  if (!body) return undefined;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

export default policyPlugin();
