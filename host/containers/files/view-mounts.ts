/**
 * Which mounts a container's view for `docker cp` has (container-view.ts), as Docker's daemon
 * mounts them for a copy: the container's volumes (their drivers' host paths), its binds, and
 * its network files, `/etc/resolv.conf`, `/etc/hostname` and `/etc/hosts`, once it has them (it
 * ran) and unless a mount of the user's is at that place. Not its tmpfs mounts.
 *
 * And Docker's rule for a copy into the container: a destination inside a mount (volume, bind,
 * `--mount type=tmpfs`) that is read-only is refused, one inside a read-write mount is allowed
 * even when the root filesystem is read-only, and anywhere else a read-only root filesystem
 * refuses it.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ContainerRecord } from "../../../core/containers/container-store.js";
import type { ContainerMount } from "../../../core/containers/mount-point.js";
import { errors } from "../../../core/errors.js";
import type { ViewMount } from "./container-view.js";

/** A container's volumes held for a copy (ContainerVolumes.hold). */
export interface VolumeHolder {
  hold(c: ContainerRecord, ref: string): Promise<{ paths: Map<string, string>; release: () => Promise<void> }>;
}

export interface ViewMountSources {
  volumes?: VolumeHolder;
  /** The folder of a container (where its network files are), by id or name; undefined when it is gone. */
  containerDir(ref: string): string | undefined;
}

/** The network files, as Docker mounts them. */
const NETWORK_FILES: [string, string][] = [["/etc/resolv.conf", "resolv.conf"], ["/etc/hostname", "hostname"], ["/etc/hosts", "hosts"]];

/**
 * The mounts of `c`'s view, with its volumes held until `release`. A container that shares
 * another's network (`container:<name>`) has that one's network files, as in Docker.
 */
export async function viewMounts(c: ContainerRecord, from: ViewMountSources): Promise<{ mounts: ViewMount[]; release: () => Promise<void> }> {
  const own = c.Mounts ?? [];
  // the copy's own use of the volumes, by an opaque random ID as Docker's mount IDs are
  const held = own.some((m) => m.Type === "volume" || m.Type === "image") && from.volumes ? await from.volumes.hold(c, randomBytes(32).toString("hex")) : undefined;
  const mounts: ViewMount[] = [];
  for (const m of own) {
    const source = m.Type === "volume" || m.Type === "image" ? held?.paths.get(m.Destination) : m.Type === "bind" ? m.Source : undefined;
    if (source) mounts.push({ destination: m.Destination, source, readOnly: !m.RW, recursive: m.Type !== "bind" || !m.NonRecursive });
  }
  const mode = c.HostConfig.NetworkMode ?? "";
  const filesDir = from.containerDir(mode.startsWith("container:") ? mode.slice("container:".length) : c.Id);
  for (const [destination, name] of NETWORK_FILES) {
    const source = filesDir && join(filesDir, name);
    if (!source || !existsSync(source) || own.some((m) => m.Destination === destination)) continue;
    mounts.push({ destination, source, readOnly: false, recursive: false });
  }
  return { mounts, release: held?.release ?? (async () => {}) };
}

/** The mount of `c` that holds the container path `path` (the deepest one), if any. */
function mountHolding(c: ContainerRecord, path: string): ContainerMount | undefined {
  let found: ContainerMount | undefined;
  for (const m of c.Mounts ?? []) {
    const inside = path === m.Destination || path.startsWith(m.Destination === "/" ? "/" : `${m.Destination}/`);
    if (inside && (!found || m.Destination.length > found.Destination.length)) found = m;
  }
  return found;
}

/** Throws Docker's refusal of a copy into `path` (resolved in the container's view), if any. */
export function checkWritable(c: ContainerRecord, path: string): void {
  const m = mountHolding(c, path);
  if (m && !m.RW) throw errors.containerVolumeReadOnly();
  if (!m && c.HostConfig.ReadonlyRootfs) throw errors.containerRootfsReadOnly();
}
