/**
 * Bind mounts that propagate: one that shares its mounts with the host (`shared`, `rshared`)
 * needs its source on a shared mount, and one that receives the host's (`slave`, `rslave`) a
 * source on a shared or slave mount, else nothing would propagate. Docker's daemon refuses such a
 * start (`path /tmp is mounted on / but it is not a shared mount`) and gives the container's root
 * the propagation the binds need (`shared`, else `rslave`), without which runc's default
 * (`rslave` root) would stop a shared bind's mounts at the container's root. A bind of the data
 * root that got `rslave` without asking (mount-plan.ts) falls back to the default, `rprivate`,
 * where its source can receive nothing, as Docker's daemon lets it (with a warning).
 */
import type { ContainerMount } from "../../core/containers/mount-point.js";
import { errors } from "../../core/errors.js";
import { mountOf, readMountinfo } from "../../core/mountinfo.js";

const SHARED = ["shared", "rshared"];
const SLAVE = ["slave", "rslave"];

/**
 * The root propagation the binds need (undefined: the runtime's default), after checking each
 * bind's source, and the destinations of the binds that fell back to `rprivate`.
 */
export function bindPropagation(mounts: readonly ContainerMount[]): { root: "shared" | "rslave" | undefined; fellBack: Set<string> } {
  const fellBack = new Set<string>();
  const binds = mounts.filter((m) => m.Type === "bind" && (SHARED.includes(m.Propagation) || SLAVE.includes(m.Propagation)));
  if (binds.length === 0) return { root: undefined, fellBack };
  const mountinfo = readMountinfo();
  let root: "shared" | "rslave" | undefined;
  for (const b of binds) {
    const holder = mountOf(b.Source, mountinfo);
    const optional = holder?.optional ?? [];
    const shared = optional.some((o) => o.startsWith("shared:"));
    if (SHARED.includes(b.Propagation)) {
      if (!shared) throw errors.mountNotShared(b.Source, holder?.mountPoint ?? "/", "shared");
      root = "shared";
    } else if (!shared && !optional.some((o) => o.startsWith("master:"))) {
      if (!b.DaemonRootSlave) throw errors.mountNotShared(b.Source, holder?.mountPoint ?? "/", "shared or slave");
      fellBack.add(b.Destination);
    } else root ??= "rslave";
  }
  return { root, fellBack };
}
