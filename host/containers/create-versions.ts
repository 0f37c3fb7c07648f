/**
 * What a container create takes of its request at the API version the client speaks, as Docker's
 * create route adapts it before the daemon's own checks: fields an older version did not have are
 * dropped (an older client's request means what it meant then), combinations a newer version
 * refuses are refused, and the container-wide `MacAddress` becomes its main network's endpoint
 * setting. Applied to the request in place; resolves with the warnings the create answers.
 *
 * By version (the first that has the field or the rule):
 * - 1.25: `AutoRemove` (an older client removes its containers itself).
 * - 1.40: `BindOptions.NonRecursive`, `KernelMemoryTCP`; an IPC mode left out is `shareable`.
 * - 1.41: a cgroup namespace mode left out is the daemon's default (before, `host` on a cgroup v1 host).
 * - 1.42: `BindOptions.CreateMountpoint`, `ConsoleSize`; options of another mount type (dropped
 *   before, refused from 1.42); `KernelMemory` ignored from 1.42.
 * - 1.43: `Annotations`.
 * - 1.44: `Healthcheck.StartInterval`; `BindOptions.ReadOnlyForceRecursive` (refused before: a
 *   client may count on it); more than one network at create (refused before); the endpoint's
 *   `MacAddress` (the container-wide one moved there from 1.44, with Docker's warning).
 * - 1.45: `VolumeOptions.Subpath` (refused before).
 * - 1.48: an endpoint's `GwPriority` (all were equal before); a mount of type `image` (refused
 *   before); Docker's warning that `VolumeDriver` does not reach the volumes of `Mounts`; a
 *   container-wide sysctl of an `ethN` interface is refused (it belongs in its endpoint's
 *   `com.docker.network.endpoint.sysctls`, API 1.46); before, `eth0`'s move there, with Docker's
 *   warning, and another interface's are refused.
 */
import type { ContainerCreateRequest } from "../../core/containers/container-config.js";
import { errors } from "../../core/errors.js";
import { compareApiVersions } from "../../core/version.js";
import { SYSCTLS_OPTION } from "../network/endpoint-sysctls.js";

/** Docker's warning for a container-wide MAC address from API 1.44 on. */
export const MAC_ADDRESS_DEPRECATED = "The container-wide MacAddress field is now deprecated. It should be specified in EndpointsConfig instead.";

/** Docker's warning from API 1.48 (the Docker CLI's before) for a `VolumeDriver` that the volumes of `Mounts` do not use. */
export const VOLUME_DRIVER_IGNORED = "WARNING: the container-wide volume-driver configuration is ignored for volumes specified via 'mount'. Use '--mount type=volume,volume-driver=...' instead";

const MOUNT_OPTIONS = [
  ["VolumeOptions", "volume"],
  ["BindOptions", "bind"],
  ["TmpfsOptions", "tmpfs"],
  ["ImageOptions", "image"],
] as const;

/**
 * NetworkMode as Docker's route takes it (none given, or `default`, is the default network,
 * `bridge`), and the key of its entry in EndpointsConfig: for the default network, the one the
 * request used, else `default`, which the create reads as the default network (`none` on a
 * daemon without one).
 */
function mainNetwork(body: ContainerCreateRequest, endpoints: Record<string, unknown>): { mode: string; key: string } {
  const asked = body.HostConfig?.NetworkMode ?? "";
  if (asked !== "" && asked !== "default") return { mode: asked, key: asked };
  return { mode: "bridge", key: ["bridge", "default"].find((k) => k in endpoints) ?? "default" };
}

/** Docker's IsUserDefined: a network by name or id, not one of the modes. */
function isUserDefined(mode: string): boolean {
  return !["bridge", "host", "none", "default"].includes(mode) && !mode.startsWith("container:");
}

/**
 * Whether a read-only bind is made read-only only at its top (its submounts left writable), as
 * every read-only bind was before API 1.44; from 1.44 it is recursively read-only where the
 * kernel and the runtime can make it so, unless its BindOptions say otherwise.
 */
export function readOnlyBindsNonRecursive(version: string): boolean {
  return compareApiVersions(version, "1.44") < 0;
}

export function adaptCreateToVersion(body: ContainerCreateRequest, version: string, host: { cgroupVersion: number } = { cgroupVersion: 2 }): string[] {
  const before = (v: string) => compareApiVersions(version, v) < 0;
  const hc = (body.HostConfig ??= {});
  const mounts = hc.Mounts ?? [];
  const endpoints = body.NetworkingConfig?.EndpointsConfig ?? {};

  if (before("1.25")) hc.AutoRemove = false;
  if (before("1.40")) {
    for (const m of mounts) if (m.BindOptions) m.BindOptions.NonRecursive = false;
    hc.KernelMemoryTCP = 0;
    if (!hc.IpcMode) hc.IpcMode = "shareable";
  }
  // an older client's container shares the host's cgroup namespace on a cgroup v1 host, whatever the daemon's default
  if (before("1.41") && !hc.CgroupnsMode && host.cgroupVersion === 1) hc.CgroupnsMode = "host";
  if (before("1.42")) {
    for (const m of mounts) {
      if (m.BindOptions) m.BindOptions.CreateMountpoint = false;
      // invalid, but not checked then: left out so that the daemon's checks take the rest
      if (m.VolumeOptions && m.Type !== "volume") m.VolumeOptions = null;
      if (m.TmpfsOptions && m.Type !== "tmpfs") m.TmpfsOptions = null;
    }
    hc.ConsoleSize = [0, 0];
  } else {
    hc.KernelMemory = 0;
    for (const m of mounts) {
      for (const [field, type] of MOUNT_OPTIONS) {
        if (m[field] && m.Type !== type) throw errors.containerInvalidResource(`${field} must not be specified on mount type "${m.Type ?? ""}"`);
      }
    }
  }
  if (before("1.43")) delete hc.Annotations;
  if (before("1.44")) {
    if (body.Healthcheck) delete body.Healthcheck.StartInterval;
    // (not read before: a read-only bind of an older client is non-recursively read-only, see readOnlyBindsNonRecursive)
    for (const m of mounts) if (m.BindOptions) delete m.BindOptions.ReadOnlyNonRecursive;
    if (mounts.some((m) => m.Type === "bind" && m.BindOptions?.ReadOnlyForceRecursive)) {
      throw errors.containerInvalidResource("BindOptions.ReadOnlyForceRecursive needs API v1.44 or newer");
    }
    const names = Object.keys(endpoints);
    if (names.length > 1) throw errors.containerInvalidResource(`Container cannot be created with multiple network endpoints: ${names.join(", ")}`);
  }
  if (before("1.45") && mounts.some((m) => m.VolumeOptions?.Subpath)) throw errors.mountSubpathNeedsApi();
  if (before("1.48")) {
    for (const ep of Object.values(endpoints)) if (ep) delete ep.GwPriority;
    if (mounts.some((m) => m.Type === "image")) throw errors.containerInvalidResource('Mount type "Image" needs API v1.48 or newer');
  }
  return [...volumeDriverCompat(body, version), ...macAddressCompat(body, version), ...sysctlCompat(body, version)];
}

/** Docker's handleVolumeDriverBC: from 1.48, a `VolumeDriver` with a volume mount that names no driver of its own is warned of. */
function volumeDriverCompat(body: ContainerCreateRequest, version: string): string[] {
  const hc = body.HostConfig!;
  if (!hc.VolumeDriver || compareApiVersions(version, "1.48") < 0) return [];
  const unnamed = (hc.Mounts ?? []).some((m) => m.Type === "volume" && !m.VolumeOptions?.DriverConfig?.Name);
  return unnamed ? [VOLUME_DRIVER_IGNORED] : [];
}

/** Docker's handleMACAddressBC: the container-wide MacAddress, and the endpoints', by version. */
function macAddressCompat(body: ContainerCreateRequest, version: string): string[] {
  const mac = body.MacAddress ?? "";
  const endpoints = (body.NetworkingConfig ??= {}).EndpointsConfig ??= {};
  const { mode } = mainNetwork(body, endpoints);
  const onNetwork = mode === "bridge" || isUserDefined(mode);
  if (compareApiVersions(version, "1.44") < 0) {
    // an endpoint's MAC did not exist: what a client sent there was not read
    if (!mac) {
      for (const ep of Object.values(endpoints)) if (ep) delete ep.MacAddress;
      return [];
    }
    if (!onNetwork) throw errors.containerInvalidResource("conflicting options: mac-address and the network mode");
    // (one network at most before 1.44: the main one, named as the request named it)
    const key = mainEndpointKey(version, body, endpoints)!;
    endpoints[key] = { ...(endpoints[key] ?? {}), MacAddress: mac };
    return [];
  }
  if (!mac) return [];
  if (onNetwork) {
    const key = mainEndpointKey(version, body, endpoints);
    if (key === undefined) {
      throw errors.containerInvalidResource("if a container-wide MAC address is supplied, HostConfig.NetworkMode must match the identity of a network in NetworkSettings.Networks");
    }
    const ep = endpoints[key];
    if (!ep?.MacAddress) endpoints[key] = { ...(ep ?? {}), MacAddress: mac };
    else if (ep.MacAddress !== mac) {
      throw errors.containerInvalidResource("the container-wide MAC address must match the endpoint-specific MAC address for the main network, or be left empty");
    }
  }
  delete body.MacAddress;
  return [MAC_ADDRESS_DEPRECATED];
}

/**
 * Docker's handleSysctlBC: a container-wide sysctl of an interface (`net.<family>.<group>.ethN.<name>`)
 * cannot be applied with the others, before the interface exists, and `ethN` names no network
 * reliably. Up to API 1.47 (1.46 brought the endpoint option) `eth0`'s move to the main network's
 * endpoint as `net.<family>.<group>.IFNAME.<name>`, before the endpoint's own (which win); from
 * 1.48 any is refused (Docker 27.0 refused them from 1.47; Docker 28 moves them at 1.47 too).
 * Not for a container on the host's or another container's namespace. (Docker answers its own refusals 500; they are the request's.)
 */
function sysctlCompat(body: ContainerCreateRequest, version: string): string[] {
  const hc = body.HostConfig!;
  const mode = hc.NetworkMode ?? "";
  if (mode === "host" || mode.startsWith("container:")) return [];
  const endpoints = (body.NetworkingConfig ??= {}).EndpointsConfig ??= {};
  let key: string | undefined;
  const moved: string[] = [];
  const settings: string[] = [];
  for (const [name, value] of Object.entries(hc.Sysctls ?? {})) {
    const parts = name.split(".");
    if (parts.length < 5 || parts[0] !== "net" || !parts[3].startsWith("eth")) continue;
    if (key === undefined) {
      if (compareApiVersions(version, "1.47") > 0) {
        throw errors.containerInvalidResource(`interface specific sysctl setting ${JSON.stringify(name)} must be supplied using driver option '${SYSCTLS_OPTION}'`);
      }
      key = mainEndpointKey(version, body, endpoints);
      if (key === undefined) {
        throw errors.containerInvalidResource(`unable to find a network for sysctl ${name}: HostConfig.NetworkMode must match the identity of a network in NetworkSettings.Networks`);
      }
    }
    if (parts[3] !== "eth0") {
      throw errors.containerInvalidResource(`unable to determine network endpoint for sysctl ${name}, use driver option '${SYSCTLS_OPTION}' to set per-interface sysctls`);
    }
    moved.push(name);
    settings.push(`net.${parts[1]}.${parts[2]}.IFNAME.${parts.slice(4).join(".")}=${value}`);
  }
  if (key === undefined) return [];
  const ep = (endpoints[key] ??= {});
  const opts = (ep.DriverOpts ??= {});
  const migrated = settings.join(",");
  opts[SYSCTLS_OPTION] = opts[SYSCTLS_OPTION] !== undefined ? `${migrated},${opts[SYSCTLS_OPTION]}` : migrated;
  for (const name of moved) delete hc.Sysctls![name];
  return [`Migrated sysctl ${JSON.stringify(moved.join(","))} to DriverOpts{${JSON.stringify(SYSCTLS_OPTION)}:${JSON.stringify(migrated)}}.`];
}

/**
 * Docker's epConfigForNetMode, shared by the MAC address's and the sysctls' moves: the key of the
 * main network's EndpointsConfig entry. With no entries, the network mode's own (the caller
 * makes the entry); with entries, before 1.44 the one there is, from 1.44 the one under the
 * network mode's name, else undefined: nothing tells which network is meant (each caller refuses
 * that in its words).
 */
function mainEndpointKey(version: string, body: ContainerCreateRequest, endpoints: Record<string, unknown>): string | undefined {
  const { key } = mainNetwork(body, endpoints);
  const names = Object.keys(endpoints);
  if (names.length === 0) return key;
  if (compareApiVersions(version, "1.44") < 0) return names[0];
  return key in endpoints ? key : undefined;
}
