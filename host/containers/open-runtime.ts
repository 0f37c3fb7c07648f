/**
 * Opens the runtime driver (the maker of OCI bundles): the `runtime` plugin `ocirun` (built-in,
 * installed package or path), made through the driver registry by its `createRuntime` hook.
 * Which runtime binary runs a container is runtime-select.ts's business, not the plugin's.
 */
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import type { PluginHost } from "../plugins/driver-registry.js";

const RUNTIME_PLUGIN = "ocirun";

export function openRuntime(host: PluginHost): Promise<RuntimeDriver> {
  return host.drivers.driver("runtime", RUNTIME_PLUGIN, { context: () => ({ execRoot: host.execRoot }) });
}
