/**
 * The error catalogue, managed plugins (`/plugins`, `docker plugin ...`; core/errors.ts
 * assembles it). The messages are Docker's (moby's plugin/errors.go and its manager); where
 * Docker answers a client's mistake with a 500, the status here is the 4xx the mistake is.
 */
import { define } from "./define.js";

export const managedPluginsErrors = {
  managedPluginNotFound: define("ENGINE_ERR_MANAGED_PLUGIN_NOT_FOUND", 404, (name: string) => `plugin ${JSON.stringify(name)} not found`),
  managedPluginAmbiguous: define("ENGINE_ERR_MANAGED_PLUGIN_AMBIGUOUS", 400, (prefix: string) => `multiple plugins found for ${JSON.stringify(prefix)}`),
  managedPluginExists: define("ENGINE_ERR_MANAGED_PLUGIN_EXISTS", 409, (name: string) => `plugin ${name} already exists`),
  managedPluginInvalidName: define("ENGINE_ERR_MANAGED_PLUGIN_INVALID_NAME", 400, (name: string, why: string) => `failed to parse reference ${name}: ${why}`),
  managedPluginCanonicalName: define("ENGINE_ERR_MANAGED_PLUGIN_CANONICAL_NAME", 400, () => "canonical references are not permitted"),
  managedPluginCreateInvalid: define("ENGINE_ERR_MANAGED_PLUGIN_CREATE_INVALID", 400, (why: string) => why),
  managedPluginSetInvalid: define("ENGINE_ERR_MANAGED_PLUGIN_SET_INVALID", 400, (why: string) => why),
  managedPluginSetActive: define("ENGINE_ERR_MANAGED_PLUGIN_SET_ACTIVE", 409, () => "cannot set on an active plugin, disable plugin before setting"),
  managedPluginEnabled: define("ENGINE_ERR_MANAGED_PLUGIN_ENABLED", 409, (name: string, context?: string) => `${context ? `${context}: ` : ""}plugin ${name} is enabled`),
  managedPluginDisabled: define(
    "ENGINE_ERR_MANAGED_PLUGIN_DISABLED",
    409,
    (name: string, context?: string) => `${context ? `${context}: ` : ""}plugin ${name} found but disabled`,
  ),
  managedPluginInUse: define("ENGINE_ERR_MANAGED_PLUGIN_IN_USE", 409, (name: string) => `plugin ${name} is in use`),
  managedPluginCapability: define("ENGINE_ERR_MANAGED_PLUGIN_CAPABILITY", 400, (name: string, capability: string) => `plugin ${name}: plugin does not provide ${JSON.stringify(capability)} capability`),
  managedPluginPrivileges: define("ENGINE_ERR_MANAGED_PLUGIN_PRIVILEGES", 400, () => "incorrect privileges"),
  managedPluginDigestName: define("ENGINE_ERR_MANAGED_PLUGIN_DIGEST_NAME", 400, () => "cannot use digest in plugin tag"),
  managedPluginStartFailed: define("ENGINE_ERR_MANAGED_PLUGIN_START_FAILED", 500, (name: string, why: string) => `plugin ${name} did not start: ${why}`),
  managedPluginStore: define("ENGINE_ERR_MANAGED_PLUGIN_STORE", 500, (id: string, why: string) => `plugin ${id}: ${why}`),
} as const;
