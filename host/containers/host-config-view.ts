/**
 * Inspect's HostConfig with every field Docker's has: Docker keeps HostConfig as a Go struct, so
 * a field the create request left out still shows, at its zero value ("" for a mode, false,
 * 0, null for a list or a pointer), except the few it marks `omitempty`, which show only when set.
 * Clients read fields they never set (docker-compose compares `HostConfig.PidMode` with "");
 * a field of ours that Docker's struct does not have is kept after Docker's, as it was.
 */
import type { HostConfig } from "../../core/containers/container-config.js";
import { HOST_CONFIG_FIELDS, HOST_CONFIG_OMIT_EMPTY } from "./host-config-fields.js";

function zeroOf(kind: string): unknown {
  switch (kind) {
    case "s":
      return "";
    case "n":
      return 0;
    case "b":
      return false;
    case "log":
      return { Type: "", Config: null };
    case "restart":
      return { Name: "", MaximumRetryCount: 0 };
    case "console":
      return [0, 0];
    default:
      return null;
  }
}

const ZERO: ReadonlyMap<string, string> = new Map(HOST_CONFIG_FIELDS.split(/\s+/).map((f) => f.split(":") as [string, string]));

function empty(v: unknown): boolean {
  if (v === null || v === undefined || v === "" || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === "object" && Object.keys(v).length === 0;
}

export function hostConfigView(hc: HostConfig, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const given: Record<string, unknown> = { ...hc, ...overrides };
  const out: Record<string, unknown> = {};
  for (const [k, kind] of ZERO) out[k] = given[k] ?? zeroOf(kind);
  for (const [k, v] of Object.entries(given)) {
    if (ZERO.has(k) || v === undefined) continue;
    if (HOST_CONFIG_OMIT_EMPTY.includes(k) && (k === "Init" ? v === null : empty(v))) continue;
    out[k] = v;
  }
  return out;
}
