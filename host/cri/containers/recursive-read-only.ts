/**
 * Recursive read-only mounts (the CRI's Mount.recursive_read_only, KEP-3857): a read-only bind
 * whose submounts are read-only too, which a plain `ro` bind does not make (it applies to the
 * top mount only). runc does it with its `rro` option (mount_setattr(2), Linux 5.12 and later).
 * As containerd decides it: a runtime handler has the feature when its runtime lists `rro` among
 * the mount options of `<runtime> features` and the kernel has mount_setattr; Status claims it
 * per handler (the kubelet and critest send such mounts only then), and CreateContainer refuses
 * such a mount on a handler without it, and the combinations the CRI forbids.
 */
import { execFileSync } from "node:child_process";
import { release } from "node:os";
import type { RuleHost } from "../../../core/options/rules.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { selectRuntime } from "../../containers/runtime-select.js";

/** By runtime binary: whether `features` lists `rro` (asked once; a runtime without `features` has not). */
const byRuntime = new Map<string, boolean>();

function runtimeHasRro(path: string): boolean {
  let known = byRuntime.get(path);
  if (known === undefined) {
    try {
      const features = JSON.parse(execFileSync(path, ["features"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] })) as { mountOptions?: string[] };
      known = features.mountOptions?.includes("rro") === true;
    } catch {
      known = false;
    }
    byRuntime.set(path, known);
  }
  return known;
}

/** mount_setattr(2) came with Linux 5.12. */
function kernelHasMountSetattr(): boolean {
  const [major, minor] = release().split(".").map((n) => parseInt(n, 10));
  return major! > 5 || (major === 5 && minor! >= 12);
}

/** Whether the runtime handler (`""`: the default runtime) can make recursive read-only mounts. */
export function recursiveReadOnlySupported(config: DaemonConfig, handler: string, host: RuleHost): boolean {
  if (!kernelHasMountSetattr()) return false;
  try {
    return runtimeHasRro(selectRuntime(config, handler || undefined, host).path);
  } catch {
    return false;
  }
}
