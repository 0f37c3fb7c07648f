/**
 * `--userns-remap`: the daemon-wide user namespace of containers, as Docker sets it up. At start
 * the option is resolved to a user and group (remap-user.ts) and their subordinate ranges to an
 * id map; container root (0:0) is the first id of those ranges on the host, "the remapped root".
 *
 * What the map changes, and where:
 * - the data root becomes `<data-root>/<uid>.<gid>` (remapped-roots.ts): images, layers,
 *   containers, volumes and networks of a remapping daemon are kept apart from an unremapped
 *   one's, since its layers are extracted with shifted owners;
 * - the storage driver extracts and packs layers through the map (core/contracts/storage.ts);
 * - each container not opted out (`HostConfig.UsernsMode: "host"`) gets a user namespace with
 *   the map (`linux.uidMappings`/`gidMappings`), made together with its network namespace so
 *   that the network namespace belongs to it (host/network/sandbox.ts);
 * - folders the remapped root must pass through (the data root, the containers' folders, the
 *   exec root where root filesystems are mounted) are root's with the remapped root's group and
 *   mode 0710 (`share`); files and folders made for a container's own use (its hosts,
 *   resolv.conf and hostname files, a new volume's data, a missing bind source) are the
 *   remapped root's (`root`);
 * - `docker commit`, `save`, `cp` and `export` give ids back in the container's terms.
 */
import { chmodSync, chownSync } from "node:fs";
import type { Logger } from "pino";
import type { HostConfig } from "../../core/containers/container-config.js";
import { errors } from "../../core/errors.js";
import { rootOwner, type IdMap, type Owner } from "../../core/userns/id-map.js";
import { remapIdMap, resolveRemapIdentity } from "./remap-user.js";

export interface UsernsRemap {
  /** `user:group` as resolved (what `/info` and the logs name). */
  readonly name: string;
  readonly idMap: IdMap;
  /** The host ids of container root. */
  readonly root: Owner;
}

/** The map of `--userns-remap=value`, or undefined when it maps nothing (no value, or root itself). */
export function setupUsernsRemap(value: string, log: Logger): UsernsRemap | undefined {
  if (value === "") return undefined;
  const who = resolveRemapIdentity(value);
  if (who.created) log.info({ user: who.user.name, uid: who.user.id }, "user namespaces: created the user and group for --userns-remap=default");
  if (who.user.id === 0) {
    // a 1-to-1 map of root changes nothing (Docker says the same and goes on without one)
    log.warn("user namespaces: root cannot be remapped with itself; user namespaces are OFF");
    return undefined;
  }
  const idMap = remapIdMap(who, value === "default");
  const root = rootOwner(idMap);
  const name = `${who.user.name}:${who.group.name}`;
  log.info({ uidMappings: idMap.uids, gidMappings: idMap.gids }, `user namespaces: ID ranges will be mapped to subuid/subgid ranges of: ${name}`);
  return { name, idMap, root };
}

/** The map a container's user namespace gets: the daemon's, unless it opted out with `--userns=host`. */
export function containerIdMap(remap: UsernsRemap | undefined, hc: Pick<HostConfig, "UsernsMode">): IdMap | undefined {
  return remap && hc.UsernsMode !== "host" ? remap.idMap : undefined;
}

/**
 * A folder the remapped root must pass through but not list: root's, with the remapped root's
 * group, mode 0710 (Docker's data root under a remap).
 */
export function shareWithRemappedRoot(remap: UsernsRemap, path: string): void {
  try {
    chownSync(path, 0, remap.root.gid);
    chmodSync(path, 0o710);
  } catch (err) {
    throw errors.usernsSetupFailed(`cannot open ${path} to the remapped root`, (err as Error).message);
  }
}

/** Docker's refusals at create (and start): what a user namespace cannot give a container. */
export function checkUsernsSettings(remap: UsernsRemap | undefined, hc: HostConfig): void {
  if (!remap || hc.UsernsMode === "host") return;
  if (hc.Privileged) throw errors.usernsPrivileged();
  if (hc.NetworkMode === "host") throw errors.usernsHostNetwork();
  if (hc.PidMode === "host") throw errors.usernsHostPid();
}
