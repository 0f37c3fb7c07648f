/**
 * The id map of a user namespace: which host uids and gids the ids inside a container stand for.
 *
 * Vocabulary
 * - container id: a uid or gid as processes inside the container (and image layer tars) see it.
 * - host id: the same id as the host's file systems store it.
 * - range: `size` consecutive container ids from `containerID` standing for host ids from
 *   `hostID` (the form of `/proc/<pid>/uid_map` and of the OCI spec's `linux.uidMappings`).
 * - remapped root: the host ids container root (0:0) stands for.
 *
 * Layers are extracted with their ids moved to the host (`hostOwner`: an id the map does not
 * cover is an error, never a silent owner), and packed with them moved back (`containerOwner`:
 * a host id the map does not cover is shown as the kernel shows it inside, the overflow id
 * 65534), so that images stay portable whatever map the daemon runs with.
 */

export interface IdRange {
  containerID: number;
  hostID: number;
  size: number;
}

export interface IdMap {
  uids: readonly IdRange[];
  gids: readonly IdRange[];
}

export interface Owner {
  uid: number;
  gid: number;
}

/** What the kernel shows inside a user namespace for an id its map does not cover (/proc/sys/kernel/overflowuid). */
const OVERFLOW_ID = 65534;

/** An id of a tar entry that the map has no host id for. */
class UnmappedIdError extends Error {
  override name = "UnmappedIdError";
}

/** The host id of container id `id`, or undefined when no range covers it. */
function toHostId(ranges: readonly IdRange[], id: number): number | undefined {
  for (const r of ranges) if (id >= r.containerID && id < r.containerID + r.size) return r.hostID + (id - r.containerID);
  return undefined;
}

/** The container id of host id `id`, or undefined when no range covers it. */
function toContainerId(ranges: readonly IdRange[], id: number): number | undefined {
  for (const r of ranges) if (id >= r.hostID && id < r.hostID + r.size) return r.containerID + (id - r.hostID);
  return undefined;
}

/** The host owner of a container owner; throws UnmappedIdError for an id outside the map. */
export function hostOwner(map: IdMap, owner: Owner): Owner {
  const uid = toHostId(map.uids, owner.uid);
  const gid = toHostId(map.gids, owner.gid);
  if (uid === undefined) throw new UnmappedIdError(`container uid ${owner.uid} cannot be mapped to a host uid (the user namespace maps ${describe(map.uids)})`);
  if (gid === undefined) throw new UnmappedIdError(`container gid ${owner.gid} cannot be mapped to a host gid (the user namespace maps ${describe(map.gids)})`);
  return { uid, gid };
}

/** The container owner of a host owner; ids outside the map become the overflow id, as the kernel shows them. */
export function containerOwner(map: IdMap, owner: Owner): Owner {
  return { uid: toContainerId(map.uids, owner.uid) ?? OVERFLOW_ID, gid: toContainerId(map.gids, owner.gid) ?? OVERFLOW_ID };
}

/** The host ids of container root. */
export function rootOwner(map: IdMap): Owner {
  return hostOwner(map, { uid: 0, gid: 0 });
}

/** `0-65535 to 100000-165535` for messages. */
function describe(ranges: readonly IdRange[]): string {
  if (ranges.length === 0) return "no ids";
  return ranges.map((r) => `${r.containerID}-${r.containerID + r.size - 1} to ${r.hostID}-${r.hostID + r.size - 1}`).join(", ");
}
