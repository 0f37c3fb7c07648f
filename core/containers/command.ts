/**
 * How a container's request overrides its image (Docker's rules), shared by `inspect` (the
 * container's effective configuration) and the runtime (the OCI spec's process).
 */
import type { ContainerConfig } from "../images/image-config.js";
import type { ContainerCreateConfig } from "./container-config.js";

export function strSlice(v: string[] | string | null | undefined): string[] | undefined {
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

/** Replaces by name or appends; a bare `NAME` (no `=`) removes NAME. */
export function mergeEnv(base: readonly string[], over: readonly string[]): string[] {
  const out = [...base];
  const nameOf = (e: string) => (e.includes("=") ? e.slice(0, e.indexOf("=")) : e);
  for (const e of over) {
    const name = nameOf(e);
    const at = out.findIndex((x) => nameOf(x) === name);
    if (!e.includes("=")) {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = e;
    else out.push(e);
  }
  return out;
}
