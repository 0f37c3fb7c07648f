/**
 * An out-of-process authorization plugin, as an engine plugin: `authz.<name>`, whose taps ask
 * the plugin's server. The server is activated (`Plugin.Activate`, which must list `authz`)
 * before its first verdict; a failed activation is tried again on the next request. Anything
 * short of a clear "Allow" (down, slow, an error, a malformed answer) denies: authorization
 * fails closed.
 */
import type { AuthzDenial } from "../../core/contracts/authz.js";
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { PluginActivation } from "../remote-plugins/activation.js";
import { PluginClient } from "../remote-plugins/client.js";
import type { PluginEndpoint } from "../remote-plugins/discover.js";
import { answerFromWire, requestToWire, responseToWire, type WireRequest } from "./wire.js";

const AUTHZ_INTERFACE = "authz";

export function remoteAuthzPlugin(endpoint: PluginEndpoint): EnginePlugin {
  const client = new PluginClient(endpoint);
  const { name } = endpoint;
  const activation = new PluginActivation(client);
  const activate = () => activation.require(AUTHZ_INTERFACE);

  const verdict = async (method: string, body: WireRequest): Promise<AuthzDenial | undefined> => {
    try {
      await activate();
      const answer = answerFromWire(await client.call(method, body));
      if (answer.Err) return { plugin: name, message: answer.Err, failed: true };
      return answer.Allow ? undefined : { plugin: name, message: answer.Msg ?? "" };
    } catch (err) {
      return { plugin: name, message: (err as Error).message, failed: true };
    }
  };

  return {
    manifest: {
      id: `authz.${name}`,
      kind: "authz",
      description: `An authorization plugin served at ${endpoint.address} (${endpoint.source})`,
      capabilities: ["request", "response", "out-of-process"],
    },
    apply(hooks, ctx) {
      hooks.authorizeRequest.tapPromise(`authz.${name}`, (req) => verdict("AuthZPlugin.AuthZReq", requestToWire(req)));
      hooks.authorizeResponse.tapPromise(`authz.${name}`, (res) => verdict("AuthZPlugin.AuthZRes", responseToWire(res)));
      // Said now, not at the first refused request: an operator who named a plugin that is not
      // running learns at once that the daemon is refusing everything.
      activate().then(
        () => ctx.log.info({ address: endpoint.address }, "authorization plugin activated"),
        (err: Error) =>
          ctx.log.error(
            { address: endpoint.address, err: err.message },
            `authorization plugin ${name} cannot be used: every API request is refused until it answers`,
          ),
      );
    },
  };
}
