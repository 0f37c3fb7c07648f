/**
 * runtime.ocirun: the default OCI runtime. It makes the container's OCI bundle: `baseSpec`
 * (spec.ts) builds config.json from the request, the image and the daemon's defaults; the spec
 * then passes through the `processSpec` waterfall; `writeBundle` (bundle.ts) writes it.
 *
 * Wiring: `apply` taps `hooks.createRuntime.for("ocirun")` with the driver
 * (core/contracts/runtime.ts). The daemon calls the driver's `writeBundle(ctx, processSpec)`
 * when it starts a container, `processSpec` being its `hooks.processSpec` waterfall, which
 * volumes, shared namespaces, network and devices tap (core/hooks.ts). The base spec is the start of the waterfall, not a tap, so that no
 * plugin order can put a tap before it.
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import { runtimeArgs, writeBundle } from "./bundle.js";
import { execProcess } from "./exec-process.js";
import { manifest } from "./manifest.js";
import { capabilitiesRefusal, DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS } from "./spec.js";
import { errors } from "../../core/errors.js";

export { baseSpec, SpecError } from "./spec.js";
export { runtimeArgs, serializeSpec, writeBundle, type ProcessSpec } from "./bundle.js";
export { applyInit, findInit, INIT_DESTINATION } from "./init.js";
export { builtinSeccompProfile } from "./seccomp-profile.js";

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => (host.platform === "linux" ? true : `OCI runtimes need Linux, this host is ${host.platform}`),
  apply(hooks) {
    const driver: RuntimeDriver = {
      name: "ocirun",
      writeBundle,
      noPivot: (daemon) => runtimeArgs(daemon).includes("--no-pivot"),
      execProcess,
    };
    hooks.createRuntime.for("ocirun").tap("runtime.ocirun", () => driver);
    // what a start would refuse of the capabilities is refused at create, as Docker's daemon does
    hooks.checkContainerCreate.tap("runtime.ocirun capabilities", (check) => {
      const hc = check.request.HostConfig;
      const why = capabilitiesRefusal(hc.CapAdd ?? [], hc.CapDrop ?? []);
      if (why) throw errors.containerInvalidSpec(why);
      // the masked and read-only paths of a container that is not privileged, recorded at create
      // as Docker's daemon records its defaults (inspect shows them; a later default does not
      // change the container); a list given, even empty, is kept
      if (!hc.Privileged) {
        hc.MaskedPaths ??= [...DEFAULT_MASKED_PATHS];
        hc.ReadonlyPaths ??= [...DEFAULT_READONLY_PATHS];
      }
      return check;
    });
  },
};

export default plugin;
