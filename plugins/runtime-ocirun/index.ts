/**
 * runtime.ocirun: the default OCI runtime. It makes the container's OCI bundle: `baseSpec`
 * (spec.ts) builds config.json from the request, the image and the daemon's defaults; the spec
 * then passes through the `processSpec` waterfall; `writeBundle` (bundle.ts) writes it.
 *
 * Wiring: the daemon owns `hooks.processSpec`, an
 * `AsyncSeriesWaterfallHook<[OciSpec, SpecContext]>` in core/hooks.ts, and calls
 * `writeBundle(ctx, (spec, c) => hooks.processSpec.promise(spec, c))` when it creates a
 * container. Storage taps it to add the root filesystem, network to set the namespace path.
 * This plugin's `apply` taps nothing yet: the base spec is the start of the waterfall, not a
 * tap, so that no plugin order can put a tap before it.
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";

export { baseSpec, SpecError } from "./spec.js";
export { globalRuntimeArgs, runtimeArgs, serializeSpec, writeBundle, type ProcessSpec } from "./bundle.js";
export { applyInit, findInit, INIT_DESTINATION } from "./init.js";
export { builtinSeccompProfile } from "./seccomp-profile.js";

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => (host.platform === "linux" ? true : `OCI runtimes need Linux, this host is ${host.platform}`),
  apply() {
    // Cheap on purpose: nothing to tap until core/hooks.ts has processSpec (see above).
  },
};

export default plugin;
