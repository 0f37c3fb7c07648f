/**
 * The proxies the configuration sets become the daemon's environment, both spellings of each
 * variable, as Docker's daemon makes them at start (cmd/dockerd: its configureProxyEnv): what
 * the daemon runs (runtimes, helpers, git for a build's remote context) then uses them too. A
 * variable that held another value is logged as overridden, both values' credentials masked.
 */
import type { Logger } from "pino";
import { maskCredentials } from "../core/options/mask-credentials.js";
import type { LoadedConfig } from "../core/options/load-config.js";

const VARIABLES = [
  ["http-proxy", ["HTTP_PROXY", "http_proxy"]],
  ["https-proxy", ["HTTPS_PROXY", "https_proxy"]],
  ["no-proxy", ["NO_PROXY", "no_proxy"]],
] as const;

/** Only a proxy a flag or the file set: one the environment gave is there already. */
export function configureProxyEnv(loaded: LoadedConfig, env: NodeJS.ProcessEnv, log: Logger): void {
  for (const [option, names] of VARIABLES) {
    const value = loaded.config[option];
    if (!value || !(loaded.given.has(option) || loaded.fromFile.has(option))) continue;
    for (const name of names) {
      const old = env[name];
      if (old && old !== value) {
        log.warn({ name, "old-value": maskCredentials(old), "new-value": maskCredentials(value) }, "overriding existing proxy variable with value from configuration");
      }
      env[name] = value;
    }
  }
}
