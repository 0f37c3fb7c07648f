/**
 * `--init` / HostConfig.Init: tini (Debian's static build) as the container's pid 1, reaping
 * zombies and forwarding signals to the command. The host's binary is bind-mounted read-only
 * at /sbin/docker-init, where Docker puts it (images and tools expect that name), and the
 * command becomes `/sbin/docker-init -- <args>`.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { OciSpec } from "../../core/contracts/runtime.js";

/** Where the init appears inside the container. */
export const INIT_DESTINATION = "/sbin/docker-init";

/**
 * Names looked up on PATH when `--init-path` is empty, in order: Docker's own name, then
 * Debian's static tini (an image may have no libc), then tini.
 */
const INIT_NAMES = ["docker-init", "tini-static", "tini"] as const;

/** `--init-path`, else the first of INIT_NAMES found executable on PATH; undefined when none is. */
export function findInit(initPath: string, pathEnv: string = process.env.PATH ?? ""): string | undefined {
  if (initPath) return initPath;
  for (const name of INIT_NAMES) {
    for (const dir of pathEnv.split(delimiter).filter(Boolean)) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** Prefixes the command with the init and mounts it; throws when no init binary is found. */
export function applyInit(spec: OciSpec, initPath: string, pathEnv?: string): void {
  const found = findInit(initPath, pathEnv);
  if (!found) throw new Error(`--init was asked for but no init binary was found (set --init-path, or install tini: ${INIT_NAMES.join(", ")} on PATH)`);
  spec.process!.args = [INIT_DESTINATION, "--", ...spec.process!.args];
  (spec.mounts ??= []).push({ destination: INIT_DESTINATION, type: "bind", source: found, options: ["bind", "ro"] });
}
