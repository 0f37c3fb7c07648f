/**
 * Devices for containers: `HostConfig.DeviceRequests` (what `docker run --device
 * vendor.com/class=name` sends: `{ Driver: "cdi", DeviceIDs: [...] }`) become edits of the
 * container's OCI spec at each start, through a `processSpec` tap.
 *
 * The one device driver here is CDI, on unless the `cdi` feature is false: its spec files are
 * read from `cdi-spec-dirs` at start (problems logged), and looked at again at each use
 * (host/devices/cdi-cache.ts). `--gpus` (the nvidia driver, or no driver, with the `gpu`
 * capability) is taken as CDI devices of kind `nvidia.com/gpu` when a spec defines that kind,
 * as Docker's nvidia driver does since 28.x: `all` is `nvidia.com/gpu=all`, `device=0,1` are
 * `nvidia.com/gpu=0` and `=1`, a count N the first N indices. A request of another driver, a
 * `--gpus` without such a spec, or CDI while it is off, fails the start as Docker's does:
 * `could not select device driver ...`. `/info` lists the discovered devices
 * (`DiscoveredDevices`), `CDISpecDirs` (empty while CDI is off), and each spec file's problem
 * among its `Warnings`.
 */
import { posix } from "node:path";
import type { Logger } from "pino";
import type { DeviceRequest } from "../../core/containers/container-config.js";
import type { OciSpec } from "../../core/contracts/runtime.js";
import { featureEnabled } from "../../core/features.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { CdiCache } from "./cdi-cache.js";

export interface DevicesDeps {
  hooks: EngineHooks;
  config: () => DaemonConfig;
  log: Logger;
}

/** `cdi-spec-dirs` as used: each cleaned, empty entries dropped (Docker's rule). */
function cdiSpecDirs(config: Pick<DaemonConfig, "cdi-spec-dir">): string[] {
  return config["cdi-spec-dir"].filter((d) => d.trim() !== "").map((d) => posix.normalize(d).replace(/(.)\/+$/, "$1"));
}

/** Go's `%v` of `[][]string`, as Docker's message shows capabilities: `[[gpu compute]]`. */
function showCapabilities(caps: DeviceRequest["Capabilities"]): string {
  return `[${(caps ?? []).map((set) => `[${set.join(" ")}]`).join(" ")}]`;
}

const GPU_KIND = "nvidia.com/gpu";

/** A `--gpus` request: the nvidia driver, or none, asking for the `gpu` capability. */
const isGpuRequest = (req: DeviceRequest) =>
  ["", "nvidia"].includes(req.Driver ?? "") && (req.Capabilities ?? []).some((set) => set.includes("gpu"));

/** The CDI names of a `--gpus` request. */
function gpuDeviceIds(req: DeviceRequest): string[] {
  const ids = req.DeviceIDs?.length ? req.DeviceIDs : req.Count === -1 ? ["all"] : Array.from({ length: Math.max(0, req.Count ?? 0) }, (_, i) => String(i));
  return ids.map((id) => `${GPU_KIND}=${id}`);
}

/** Applies every device request of a container to its spec; throws the start's error. */
async function applyDeviceRequests(
  spec: OciSpec, requests: readonly DeviceRequest[], daemon: DaemonConfig, cache: CdiCache,
): Promise<OciSpec> {
  let out = spec;
  for (const req of requests) {
    const driver = req.Driver ?? "";
    if (isGpuRequest(req) && featureEnabled(daemon, "cdi")) {
      const { devices } = await cache.refresh();
      if ([...devices.keys()].some((id) => id.startsWith(`${GPU_KIND}=`))) {
        try {
          out = await cache.inject(out, gpuDeviceIds(req));
        } catch (err) {
          throw errors.deviceCdiInjectionFailed((err as Error).message);
        }
        continue;
      }
    }
    if (driver !== "cdi" || !featureEnabled(daemon, "cdi")) throw errors.deviceDriverUnavailable(driver, showCapabilities(req.Capabilities));
    if (req.Count) throw errors.deviceRequestInvalid("unexpected count in CDI device request");
    if (Object.keys(req.Options ?? {}).length > 0) throw errors.deviceRequestInvalid("unexpected options in CDI device request");
    const ids = req.DeviceIDs ?? [];
    if (ids.length === 0) continue;
    try {
      out = await cache.inject(out, ids);
    } catch (err) {
      throw errors.deviceCdiInjectionFailed((err as Error).message);
    }
  }
  return out;
}

export function openDevices(deps: DevicesDeps): CdiCache {
  const { hooks, config, log } = deps;
  const cache = new CdiCache(cdiSpecDirs(config()));
  hooks.start.tapPromise("devices", async () => {
    if (!featureEnabled(config(), "cdi")) {
      log.info("CDI device injection is off (feature cdi=false)");
      return;
    }
    const scan = await cache.refresh();
    for (const [path, problems] of scan.errors) for (const problem of problems) log.warn({ path }, `CDI setup error: ${problem}`);
    log.info({ dirs: cache.dirs, devices: [...scan.devices.keys()] }, `CDI: ${scan.devices.size} device(s) discovered`);
  });
  hooks.processSpec.tapPromise("devices", (spec, ctx) => applyDeviceRequests(spec, ctx.hostConfig.DeviceRequests ?? [], ctx.daemon, cache));
  hooks.processInfo.tapPromise("devices", async (info) => {
    if (!featureEnabled(config(), "cdi")) return { ...info, CDISpecDirs: [] };
    const scan = await cache.refresh();
    const warnings = [...scan.errors].flatMap(([path, problems]) => problems.map((p) => `CDI: Error associated with spec file ${path}: ${p}`));
    return {
      ...info,
      CDISpecDirs: [...cache.dirs],
      ...(scan.devices.size > 0 ? { DiscoveredDevices: [...scan.devices.keys()].map((ID) => ({ Source: "cdi", ID })) } : {}),
      Warnings: [...info.Warnings, ...warnings],
    };
  });
  return cache;
}
