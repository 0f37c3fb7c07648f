/**
 * Opens the runtime driver (the maker of OCI bundles): loads the `runtime` plugin `ocirun`
 * (built-in, installed package or path) and asks its `createRuntime` hook for the driver.
 * Which runtime binary runs a container is runtime-select.ts's business, not the plugin's.
 */
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import type { EngineHooks } from "../../core/hooks.js";
import { loadPlugins, type LoaderDeps } from "../plugins/plugin-loader.js";

export const RUNTIME_PLUGIN = "ocirun";

export async function openRuntime(loader: LoaderDeps & { hooks: EngineHooks }): Promise<RuntimeDriver> {
  await loadPlugins([{ kind: "runtime", name: RUNTIME_PLUGIN }], loader);
  const driver = await loader.hooks.createRuntime.get(RUNTIME_PLUGIN)?.promise({ execRoot: loader.execRoot });
  if (!driver) throw new Error(`runtime plugin ${RUNTIME_PLUGIN} was loaded but made no driver (it tapped no createRuntime hook)`);
  return driver;
}
