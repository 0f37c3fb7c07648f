/**
 * How a container's request overrides its image (Docker's rules), shared by `inspect` (the
 * container's effective configuration) and the runtime (the OCI spec's process).
 */
import type { ContainerConfig } from "../images/image-config.js";
import type { ContainerCreateConfig } from "./container-config.js";

function strSlice(v: string[] | string | null | undefined): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === "string" ? [v] : v;
}

/**
 * The entrypoint and command that run: an Entrypoint in the request replaces the image's
 * Entrypoint and Cmd (`[""]` clears it); a request Cmd without Entrypoint replaces the image's
 * Cmd and keeps its Entrypoint.
 */
export function resolveCommand(config: Pick<ContainerCreateConfig, "Entrypoint" | "Cmd">, image: Pick<ContainerConfig, "Entrypoint" | "Cmd">): { entrypoint: string[]; cmd: string[] } {
  const reqEntry = strSlice(config.Entrypoint);
  const reqCmd = strSlice(config.Cmd);
  if (reqEntry && reqEntry.length > 0) {
    return { entrypoint: reqEntry.length === 1 && reqEntry[0] === "" ? [] : reqEntry, cmd: reqCmd ?? [] };
  }
  return {
    cmd: reqCmd && reqCmd.length > 0 ? reqCmd : (strSlice(image.Cmd) ?? []),
    entrypoint: reqEntry === undefined ? (strSlice(image.Entrypoint) ?? []) : [],
  };
}

const envName = (e: string) => (e.includes("=") ? e.slice(0, e.indexOf("=")) : e);

/**
 * A container's `Config.Env` as Docker's daemon records it at create: the request's entries as
 * given, in their order (a bare `NAME`, with no `=`, kept as it is), then each of the image's
 * whose name no request entry has (so a bare `NAME` hides the image's NAME).
 */
export function createEnv(image: readonly string[], request: readonly string[]): string[] {
  if (request.length === 0) return [...image];
  const named = new Set(request.map(envName));
  return [...request, ...image.filter((e) => !named.has(envName(e)))];
}

/**
 * The environment a container's process gets, as Docker's daemon makes it: the defaults (PATH,
 * HOSTNAME, TERM with a terminal), each replaced in place by a `Config.Env` entry of its name
 * or removed by a bare `NAME`; the other entries with a value appended in order, and the other
 * bare names left out (nothing to unset).
 */
export function processEnv(defaults: readonly string[], env: readonly string[]): string[] {
  const out: (string | undefined)[] = [...defaults];
  const at = new Map(defaults.map((e, i) => [envName(e), i]));
  for (const e of env) {
    const i = at.get(envName(e));
    if (!e.includes("=")) {
      if (i !== undefined) out[i] = undefined;
    } else if (i !== undefined) out[i] = e;
    else out.push(e);
  }
  return out.filter((e): e is string => e !== undefined);
}

/** Replaces by name or appends; a bare `NAME` (no `=`) removes NAME. */
export function mergeEnv(base: readonly string[], over: readonly string[]): string[] {
  const out = [...base];
  for (const e of over) {
    const name = envName(e);
    const at = out.findIndex((x) => envName(x) === name);
    if (!e.includes("=")) {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = e;
    else out.push(e);
  }
  return out;
}
