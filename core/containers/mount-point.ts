/**
 * A container's mounts besides its root filesystem: what `HostConfig.Mounts` asks for (Docker's
 * `mount.Mount`), and what the container's record keeps of each mount once its create has
 * resolved `Binds`, `Mounts` and the image's `VOLUME`s (Docker's MountPoint, shown as `Mounts`
 * by inspect and the list, with the daemon's own fields beside).
 */

/** One entry of `HostConfig.Mounts` (`docker run --mount`). */
export interface MountRequest {
  Target?: string;
  Source?: string;
  Type?: string;
  ReadOnly?: boolean;
  Consistency?: string;
  BindOptions?: {
    Propagation?: string;
    NonRecursive?: boolean;
    CreateMountpoint?: boolean;
    ReadOnlyNonRecursive?: boolean;
    ReadOnlyForceRecursive?: boolean;
  } | null;
  VolumeOptions?: {
    NoCopy?: boolean;
    Labels?: Record<string, string> | null;
    DriverConfig?: { Name?: string; Options?: Record<string, string> | null } | null;
    Subpath?: string;
  } | null;
  TmpfsOptions?: { SizeBytes?: number; Mode?: number; Options?: string[][] | null } | null;
  /** `image` mounts (API 1.48): the folder or file of the image that is mounted. */
  ImageOptions?: { Subpath?: string } | null;
}

export type ContainerMountType = "bind" | "volume" | "tmpfs" | "image";

/** One mount of a container, as its create resolved it. */
export interface ContainerMount {
  Type: ContainerMountType;
  /** The volume's name (volumes); the image as the request named it (image mounts). */
  Name?: string;
  /** The host path: a bind's source, a volume's mountpoint, where an image is mounted while the container runs; "" for tmpfs. */
  Source: string;
  Destination: string;
  /** The volume's driver (volumes only). */
  Driver?: string;
  /** The mode as `Binds` gave it (`ro`, `z`, `rw,nocopy`); `z` for a local volume given without one; "" else. */
  Mode: string;
  RW: boolean;
  Propagation: string;
  // --- the daemon's own, not shown ---
  /** volume: filled from the image's content at Destination while it is empty (not `nocopy`). */
  CopyData?: boolean;
  /** volume: made for this container (an image VOLUME, `-v /path`, a mount without Source); `rm -v` removes it. */
  Anonymous?: boolean;
  /** bind: the host path is made when missing (`-v` binds, `CreateMountpoint`). */
  CreateSource?: boolean;
  /** bind: `rslave` given by the daemon (a bind of or above the data root, none asked), which may fall back to `rprivate`. */
  DaemonRootSlave?: boolean;
  /** bind: not recursive (`bind-nonrecursive`). */
  NonRecursive?: boolean;
  /** bind, read-only: only its top read-only, its submounts as they are (`bind-recursive=writable`; every read-only bind of a client before API 1.44). */
  ReadOnlyNonRecursive?: boolean;
  /** bind, read-only: recursively read-only or not started (`bind-recursive=readonly`). */
  ReadOnlyForceRecursive?: boolean;
  /** tmpfs: mount options (`size=64m`, `mode=1777`, `exec`). */
  TmpfsOptions?: string[];
  /** volume, image: the folder or file inside it that is mounted (`VolumeOptions.Subpath`, `ImageOptions.Subpath`). */
  Subpath?: string;
  /** image: the image's ID, and the top layer of its chain (none for an image without layers). */
  Image?: string;
  Layer?: string;
}
