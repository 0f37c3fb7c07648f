/**
 * `GET /info` as each API version shows it, as Docker 28's system route shapes its answer
 * (api/server/router/system/system_routes.go):
 * - before 1.25: `ExecutionDriver: "<not supported>"`, and `SecurityOptions` by name only
 *   (`seccomp`, not `name=seccomp,profile=builtin`);
 * - before 1.39: an unknown kernel version or operating system is `<unknown>`, not "";
 * - before 1.47: `RegistryConfig` has `AllowNondistributableArtifactsCIDRs` and `...Hostnames`,
 *   null (non-distributable artifacts are always pushed since Docker 28, which dropped them);
 * - before 1.49: each commit (`ContainerdCommit`, `RuncCommit`, `InitCommit`) carries `Expected`,
 *   equal to its `ID`; API 1.49 dropped the field; `FirewallBackend` (new in 1.49) is left out;
 * - before 1.50: `BridgeNfIptables` and `BridgeNfIp6tables`, always false since Docker 28, which
 *   dropped them at 1.50; `DiscoveredDevices` (new in 1.50) is left out.
 * The answer is a copy; the info itself is not changed.
 */
import type { SystemInfo } from "../../../core/system-info.js";
import { compareApiVersions } from "../../../core/version.js";

type Json = Record<string, unknown>;

export function infoAtVersion(info: SystemInfo, version: string): Json {
  const before = (v: string) => compareApiVersions(version, v) < 0;
  let out: Json = { ...info };
  if (before("1.50")) {
    delete out.DiscoveredDevices;
    out = insertAfter(out, "IPv4Forwarding", { BridgeNfIptables: false, BridgeNfIp6tables: false });
  }
  if (before("1.49")) {
    delete out.FirewallBackend;
    for (const key of ["ContainerdCommit", "RuncCommit", "InitCommit"] as const) out[key] = { ID: info[key].ID, Expected: info[key].ID };
  }
  if (before("1.47")) {
    out.RegistryConfig = { AllowNondistributableArtifactsCIDRs: null, AllowNondistributableArtifactsHostnames: null, ...info.RegistryConfig };
  }
  if (before("1.39")) {
    if (!info.KernelVersion) out.KernelVersion = "<unknown>";
    if (!info.OperatingSystem) out.OperatingSystem = "<unknown>";
  }
  if (before("1.25")) {
    out.SecurityOptions = info.SecurityOptions.map(securityOptionName);
    out.ExecutionDriver = "<not supported>";
  }
  return out;
}

/** `name=seccomp,profile=builtin` -> `seccomp`: the value of its `name` field. */
function securityOptionName(option: string): string {
  for (const field of option.split(",")) {
    const [key, value] = field.split("=", 2);
    if (key === "name" && value !== undefined) return value;
  }
  return option;
}

/** The object with `fields` put right after `key` (at the end when `key` is absent): the order Docker's struct gives them. */
function insertAfter(obj: Json, key: string, fields: Json): Json {
  if (!(key in obj)) return { ...obj, ...fields };
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = v;
    if (k === key) Object.assign(out, fields);
  }
  return out;
}
