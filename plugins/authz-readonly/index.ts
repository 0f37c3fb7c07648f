/**
 * authz.readonly: an in-process authorization plugin for a daemon that must be watched but
 * not steered from some socket (monitoring, dashboards): requests that only read (GET, HEAD)
 * pass, every other request is denied.
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";

const READ_METHODS = new Set(["GET", "HEAD"]);

const plugin: EnginePlugin = {
  manifest,
  apply(hooks) {
    hooks.authorizeRequest.tap(manifest.id, (request) =>
      READ_METHODS.has(request.method)
        ? undefined
        : { plugin: "readonly", message: `${request.method} ${request.uri} changes state; this daemon is read-only` },
    );
  },
};

export default plugin;
