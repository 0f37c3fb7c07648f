/**
 * The volume contract: where the data that outlives a container is kept, and how a container
 * gets to see it.
 *
 * Vocabulary
 * - volume: a named piece of storage a driver keeps. Its name is unique in the daemon
 *   (`[a-zA-Z0-9][a-zA-Z0-9_.-]+`; the daemon checks names before a driver sees them). An
 *   anonymous volume is an ordinary volume with a 64-hex name the daemon drew and the label
 *   `com.docker.volume.anonymous`; the driver does not know the difference.
 * - volume driver: one per driver name in a daemon (`local`, a third party's `nfs`...). It
 *   keeps its volumes and their options itself, so that they survive a daemon restart; the
 *   daemon keeps its own record of each volume (driver, labels, creation time) beside that.
 * - options (`docker volume create -o k=v`, `VolumeOptions.DriverConfig.Options`): plain names
 *   in the driver's own vocabulary (`type`, `o`, `device` for `local`), not namespaced, declared
 *   with their types in the plugin's manifest (core/contracts/plugin.ts). The driver validates
 *   what the declarations cannot say, then the host applies them (host/plugins/plugin-options.ts):
 *   an unknown or invalid option is an Error that names it, which the daemon answers with 400
 *   (`create <name>: <message>`).
 * - mountpoint: the host path the driver shows for a volume (`Mountpoint` of `docker volume
 *   inspect`), stable for the volume's life.
 * - mount: a container's use of a volume while it runs. `mount(name, containerId)` returns the
 *   host path to bind into the container (the daemon does the bind, through the OCI spec);
 *   the driver counts its users by container id and prepares what it must (mounts a device)
 *   on the first, and releases it on the last `unmount`. Mounting twice for the same container
 *   counts once; unmounting for a container that holds no mount is not an error.
 * - scope: `local` (the volume lives on this host) or `global` (the same name means the same
 *   data on every host of a cluster). Reported as the volume's `Scope`.
 *
 * Lifecycle of a volume
 *   validateOptions(options) (at create; also at container create, before a name is taken) ->
 *   create(name, options) (once; the daemon never creates a name the driver already has) ->
 *   get(name) / list() (any time, also after a restart) -> mount(name, id) before a container
 *   starts / unmount(name, id) after it exits (as often as containers run) -> remove(name)
 *   (never while mounted by a running container: the daemon refuses a volume any container
 *   uses; removing a volume the driver does not have is not an error).
 *
 * The daemon decides which containers use a volume (reference counting for `docker volume rm`
 * and prune), fills a new volume from the image (copy-up) through the host path of `mount`,
 * and records everything a container's create asked for; a driver only keeps data.
 *
 * A driver may also be a server of another process speaking Docker's `VolumeDriver` protocol
 * (host/volumes/remote-volume-driver.ts adapts it to this contract; host/remote-plugins finds
 * it): the host's adapter, not a plugin author, deals with that protocol.
 *
 * Optional abilities are declared in `capabilities`, never guessed: `usage` means `usage(name)`
 * says how many bytes a volume holds (`docker system df -v`, prune's `SpaceReclaimed`).
 */

import type { PluginOptionValues } from "../options/plugin-options.js";

export type VolumeScope = "local" | "global";
export type VolumeCapability = "usage";

/** What a driver knows of one volume. */
export interface VolumeInfo {
  name: string;
  /** The host path shown as the volume's `Mountpoint`. */
  mountpoint: string;
  /** When the driver made it (RFC 3339). */
  createdAt: string;
  /** The options it was created with. */
  options: Record<string, string>;
  /** Free-form low-level state (`Status` of inspect); absent when the driver has none. */
  status?: Record<string, unknown>;
}

export interface VolumeDriver {
  /** The name operators select it by (`local`). */
  readonly name: string;
  readonly scope: VolumeScope;
  readonly capabilities: readonly VolumeCapability[];
  /** Throws an Error naming the first unknown or invalid option. */
  validateOptions(options: Record<string, string>): void;
  /**
   * Makes a volume; validates `options` first. Throws when `name` exists. `values`: the options
   * as the manifest's declared types read them (numbers, booleans), defaults filled, when the
   * manifest declares options (the host has then refused what the declarations refuse).
   */
  create(name: string, options: Record<string, string>, values?: PluginOptionValues): Promise<VolumeInfo>;
  /** The volume, or undefined when the driver has none of that name. */
  get(name: string): Promise<VolumeInfo | undefined>;
  list(): Promise<VolumeInfo[]>;
  /**
   * Prepares the volume for container `containerId` and resolves with the host path to bind
   * into it (a directory). Throws when the volume does not exist or cannot be mounted.
   */
  mount(name: string, containerId: string): Promise<string>;
  /** Ends container `containerId`'s use of the volume; the last user's unmount releases it. */
  unmount(name: string, containerId: string): Promise<void>;
  /** Removes the volume and its data; a missing volume is not an error. */
  remove(name: string): Promise<void>;
  /** Bytes the volume holds; present exactly when `capabilities` has `usage`. */
  usage?(name: string): Promise<number>;
  /** Lines for `/info`-style reports: `[["Volumes", "3"]]`. */
  status(): Promise<[string, string][]>;
}

/** What the daemon gives a volume plugin's factory (once per driver name). */
export interface VolumeDriverContext {
  dataRoot: string;
  /** `<data-root>/volumes`: the folder drivers keep volumes in, each under its own name. */
  home: string;
  /**
   * Who a new volume's data belongs to when it is not root: the remapped root under
   * `--userns-remap` (container root must own what it writes to), as Docker's local driver does.
   */
  rootOwner?: { uid: number; gid: number };
}
