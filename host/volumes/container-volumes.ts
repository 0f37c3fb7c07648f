/**
 * A container's use of volumes and binds, from its create to its removal:
 *   create: `plan` checks the request's mounts (mount-plan.ts) and the drivers' options, before
 *   a name or a layer is taken; `realize` makes the named volumes that do not exist yet and the
 *   anonymous ones, and returns the mounts the record keeps (`discard` undoes it when the
 *   create fails later).
 *   start: `mount` (the rootfs is mounted) has each volume's driver mount it for the container,
 *   makes missing `-v` bind sources, and fills a volume that is still empty from the image's
 *   content at its destination (copy-up, unless `nocopy`); `spec` (a processSpec tap) adds the
 *   binds, volumes and tmpfs mounts to the OCI spec.
 *   A volume mounted from a path inside it (`Subpath`) is pinned at start onto a staging path of
 *   the daemon's (volume-subpath.ts), unpinned at exit before its driver unmounts it.
 *   exit: `unmount` ends the container's use of each volume (safe to repeat).
 *   removal: `removed` removes the anonymous volumes with `rm -v` and AutoRemove.
 */
import { randomBytes } from "node:crypto";
import { lchown, lstat, mkdir, readdir, readlink } from "node:fs/promises";
import { posix } from "node:path";
import { execFileAsync as run } from "../../core/exec-file.js";
import type { Logger } from "pino";
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import type { ContainerMount } from "../../core/containers/mount-point.js";
import { replacedByUserMounts } from "../../core/containers/user-mounts.js";
import type { OciMount, OciSpec, SpecContext } from "../../core/contracts/runtime.js";
import { EngineError, errors } from "../../core/errors.js";
import { makeEvent } from "../../core/events/event.js";
import type { EngineHooks } from "../../core/hooks.js";
import { planMounts, type PlannedMount } from "./mount-plan.js";
import { pinSubpath, unpinAll } from "./volume-subpath.js";
import { bindPropagation } from "./bind-propagation.js";
import { containersWithImageMounts, imageMountPath, mountImage, unmountImages } from "./image-mounts.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import { recursiveReadOnlyRefusal } from "./recursive-read-only.js";
import type { VolumeService } from "./volume-service.js";
import type { Owner } from "../../core/userns/id-map.js";

export interface ContainerVolumesDeps {
  volumes: VolumeService;
  containers: ContainerStore;
  hooks: EngineHooks;
  log: Logger;
  /** Who missing bind sources are made for: the remapped root under `--userns-remap` (Docker's rule), else root. */
  rootOwner?: Owner;
  /** Where subpaths are pinned, one folder per use (`<exec-root>/volume-subpaths`). */
  subpathRoot: string;
  /** The data root: a bind of it, or above it, receives its unmounts (mount-plan.ts). */
  daemonRoot?: string;
  /** Image mounts (image-mounts.ts): the images they name, the driver of their layers, where they are mounted (`<exec-root>/image-mounts`). */
  images?: ImageStore;
  storage?: StorageDriver;
  imageMountRoot?: string;
}

export class ContainerVolumes {
  /** Per running container: the volumes its drivers mounted, destination -> name and host path. */
  private readonly active = new Map<string, Map<string, { name: string; driver: string; path: string }>>();
  /** The uses (containers, copies) with subpaths pinned: only theirs are unpinned. */
  private readonly pinned = new Set<string>();

  constructor(private readonly deps: ContainerVolumesDeps) {}

  // --- create --------------------------------------------------------------------------------

  /** Every mount of a create request, checked; throws the 400/404/409 a create answers with. */
  async plan(hc: ContainerRecord["HostConfig"], configVolumes: readonly string[], options: { readOnlyBindsNonRecursive?: boolean } = {}): Promise<PlannedMount[]> {
    const planned = planMounts(hc, configVolumes, this.volumesFrom(hc.VolumesFrom ?? []), { ...options, daemonRoot: this.deps.daemonRoot });
    for (const m of planned) {
      // an anonymous volume is checked under a name of its kind, which Docker's refusals show
      if (m.Type === "volume") await this.deps.volumes.check(m.Name ?? randomBytes(32).toString("hex"), m.Driver ?? "", m.create?.options ?? {});
    }
    return planned;
  }

  /**
   * The mounts of the containers VolumesFrom names (`name[:ro|rw]`, checked at create by
   * host/containers/create-checks.ts), as Docker copies them: read-only when the other's is or
   * with `ro`; a later entry's replaces an earlier one at the same destination. They are the
   * other's volumes: not made again, not filled. An anonymous one stays anonymous here, as
   * Docker copies the mount's spec: a removal with `-v` of whichever of the two containers goes
   * last takes it (the first finds it in use and leaves it).
   */
  private volumesFrom(entries: readonly string[]): PlannedMount[] {
    const byDest = new Map<string, PlannedMount>();
    for (const entry of entries) {
      const [ref, mode = ""] = entry.split(":");
      const ro = mode.split(",").includes("ro");
      for (const m of this.deps.containers.get(ref).Mounts ?? []) {
        const { CopyData: _copy, CreateSource: _create, ...rest } = m;
        byDest.set(m.Destination, { ...rest, RW: m.RW && !ro, Mode: "" });
      }
    }
    return [...byDest.values()];
  }

  /**
   * Makes the volumes the plan needs and finds the images its image mounts name (404 for one
   * there is not); resolves with the mounts to record, the images mounted, and the release of
   * their holds (the images' layers are held too, until the record names them).
   */
  async realize(planned: readonly PlannedMount[], containerId: string): Promise<{ mounts: ContainerMount[]; images: Image[]; release: () => void }> {
    const holds: (() => void)[] = [];
    const mounts: ContainerMount[] = [];
    const images: Image[] = [];
    const release = () => holds.forEach((h) => h());
    try {
      for (const [index, { create, ...m }] of planned.entries()) {
        if (m.Type === "image") {
          if (!this.deps.images || !this.deps.imageMountRoot) throw errors.mountInvalidConfig("image", "mount type image is not supported by this engine");
          const image = this.deps.images.resolve(m.Name ?? "");
          holds.push(this.deps.images.hold(image.chain));
          images.push(image);
          // (the storage driver knows a layer by its chain ID without the algorithm)
          const layer = image.chain.at(-1)?.slice("sha256:".length);
          mounts.push({ ...m, Source: imageMountPath(this.deps.imageMountRoot, containerId, index), Image: image.id, ...(layer ? { Layer: layer } : {}) });
          continue;
        }
        if (m.Type !== "volume") {
          mounts.push(m);
          continue;
        }
        const { volume, created } = await this.deps.volumes.create({
          ...(m.Name ? { name: m.Name } : {}),
          driver: m.Driver ?? "",
          options: create?.options,
          labels: create?.labels,
          anonymous: !m.Name,
        });
        holds.push(this.deps.volumes.hold(volume.Name));
        const mode = m.Mode === "" && create?.defaultModeZ && volume.Driver === "local" ? "z" : m.Mode;
        mounts.push({ ...m, Name: volume.Name, Driver: volume.Driver, Source: volume.Mountpoint, Mode: mode, ...(created && !m.Name ? { Anonymous: true } : {}) });
      }
    } catch (err) {
      release();
      await this.discard(mounts);
      throw err;
    }
    return { mounts, images, release };
  }

  /** Removes the anonymous volumes a create made, when the create fails after `realize` (one inherited from another container stays: that one uses it). */
  async discard(mounts: readonly ContainerMount[]): Promise<void> {
    for (const m of mounts) {
      if (m.Type === "volume" && m.Anonymous && m.Name) await this.deps.volumes.remove(m.Name).catch(() => {});
    }
  }

  // --- start and exit ------------------------------------------------------------------------

  /** Before the container starts (its rootfs mounted at `rootfs`): volumes mounted and filled, bind sources made. */
  async mount(c: ContainerRecord, rootfs: string): Promise<void> {
    const mine = new Map<string, { name: string; driver: string; path: string }>();
    this.active.set(c.Id, mine);
    // a run the daemon did not see end (a restart it was waiting for) may have left its pins
    await this.unpin(c.Id);
    try {
      for (const [index, m] of (c.Mounts ?? []).entries()) {
        if (m.Type === "bind" && m.CreateSource) {
          // As Docker does for `-v /host:/ctr`: a missing host path becomes a folder.
          await makeBindSource(m.Source, this.deps.rootOwner).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== "EEXIST") throw errors.mountFailed(m.Destination, `cannot create the bind source ${m.Source}: ${err.message}`);
          });
        }
        if (m.Type === "image" && this.deps.storage) {
          await mountImage(this.deps.storage, m);
          // (no driver: image-mounts.ts unmounts it)
          mine.set(m.Destination, { name: "", driver: "", path: (await this.subpath(m.Source, m.Subpath, c.Id, index)).path });
          continue;
        }
        if (m.Type !== "volume" || !m.Name) continue;
        const rec = this.deps.volumes.get(m.Name);
        const driver = await this.deps.volumes.driver(rec.Driver);
        const volumePath = await driver.mount(m.Name, c.Id).catch((err: Error) => {
          // named by the volume's path, as Docker's daemon names it
          throw errors.mountFailed(m.Source || m.Destination, err.message);
        });
        mine.set(m.Destination, { name: m.Name, driver: rec.Driver, path: volumePath });
        const { path, directory } = await this.subpath(volumePath, m.Subpath, c.Id, index);
        mine.get(m.Destination)!.path = path;
        this.mounted(c.Id, m, rec.Driver);
        // into the subpath too, as Docker's copy goes to what the mount point's set-up gives
        if (m.CopyData && directory) await copyUp(rootfs, m.Destination, path);
      }
    } catch (err) {
      await this.unmount(c.Id);
      throw err instanceof EngineError ? err : errors.mountFailed("", (err as Error).message);
    }
  }

  /** `volumePath`, or the staging path `subpath` of it is pinned on (the use's n-th). */
  private async subpath(volumePath: string, subpath: string | undefined, use: string, n: number): Promise<{ path: string; directory: boolean }> {
    if (!subpath) return { path: volumePath, directory: true };
    this.pinned.add(use);
    const staging = posix.join(this.pinDir(use), String(n));
    const { directory } = await pinSubpath(volumePath, subpath, staging);
    return { path: staging, directory };
  }

  private pinDir(use: string): string {
    return posix.join(this.deps.subpathRoot, use);
  }

  /** The use's pins gone (none made: nothing to do). */
  private async unpin(use: string): Promise<void> {
    if (this.pinned.delete(use)) await unpinAll(this.pinDir(use));
  }

  /**
   * Whether the container's run has a volume of a plugin (a driver other than the daemon's own
   * `local`): one whose Unmount a client can see, which the exit then does before it is told
   * (runner.ts, recordExit).
   */
  usesPlugins(containerId: string): boolean {
    return [...(this.active.get(containerId)?.values() ?? [])].some((v) => v.driver !== "" && v.driver !== "local");
  }

  /** After the container exits (or failed to start): its subpaths unpinned, its drivers' mounts released. Safe to repeat. */
  async unmount(containerId: string): Promise<void> {
    await this.unpin(containerId);
    if (this.deps.imageMountRoot) await unmountImages(this.deps.imageMountRoot, containerId);
    const mine = this.active.get(containerId);
    if (!mine) return;
    this.active.delete(containerId);
    for (const { name, driver: driverName } of mine.values()) {
      if (driverName === "") continue;
      try {
        const driver = await this.deps.volumes.driver(driverName);
        await driver.unmount(name, containerId);
        this.unmounted(containerId, name, driverName);
      } catch (err) {
        this.deps.log.error({ err, container: containerId, volume: name }, "cannot unmount a volume");
      }
    }
  }

  /** The `mount` event of volume mount `m` for container `id`, as Docker logs it. */
  private mounted(id: string, m: ContainerMount, driver: string): void {
    this.deps.hooks.event.call(makeEvent("volume", "mount", m.Name ?? "", {
      container: id, destination: m.Destination, driver, propagation: m.Propagation, "read/write": String(m.RW),
    }));
  }

  private unmounted(id: string, name: string, driver: string): void {
    this.deps.hooks.event.call(makeEvent("volume", "unmount", name, { container: id, driver }));
  }

  /** At daemon start: the volumes of containers still running are mounted for them again (their drivers count them). */
  async restore(): Promise<void> {
    // subpaths pinned before the daemon's start: kept for the containers that still run (their
    // exit unpins them), unpinned for the others
    for (const use of await readdir(this.deps.subpathRoot).catch(() => [] as string[])) {
      this.pinned.add(use);
      if (!this.deps.containers.find(use)?.State.Running) await this.unpin(use);
    }
    // image mounts: likewise kept for the containers still running
    if (this.deps.imageMountRoot) {
      for (const id of await containersWithImageMounts(this.deps.imageMountRoot)) {
        if (!this.deps.containers.find(id)?.State.Running) await unmountImages(this.deps.imageMountRoot, id);
      }
    }
    for (const c of this.deps.containers.list()) {
      if (!c.State.Running) continue;
      const mine = new Map<string, { name: string; driver: string; path: string }>();
      for (const m of c.Mounts ?? []) {
        if (m.Type !== "volume" || !m.Name) continue;
        try {
          const rec = this.deps.volumes.get(m.Name);
          const path = await (await this.deps.volumes.driver(rec.Driver)).mount(m.Name, c.Id);
          mine.set(m.Destination, { name: m.Name, driver: rec.Driver, path });
        } catch (err) {
          this.deps.log.warn({ err, container: c.Id, volume: m.Name }, "cannot restore a running container's volume");
        }
      }
      this.active.set(c.Id, mine);
    }
  }

  // --- docker cp -----------------------------------------------------------------------------

  /**
   * The host paths of a container's volumes (destination -> path) for a copy, running or not:
   * each driver mounts its volume for a use of its own (`ref`), so that the container's exit or
   * start meanwhile neither unmounts it under the copy nor counts the copy as the container's.
   * `release` ends those uses (safe to repeat). Its image mounts too while it runs (they are
   * mounted only then). Each volume's mount and unmount are logged as the container's `mount`
   * and `unmount` events, as Docker logs them around a copy (its openContainerFS and
   * UnmountVolumes), whether the container runs or not.
   */
  async hold(c: ContainerRecord, ref: string): Promise<{ paths: Map<string, string>; release: () => Promise<void> }> {
    // (logged: its mount event was, once its subpath is pinned too)
    const held: { name: string; driver: string; logged: boolean }[] = [];
    const release = async () => {
      await this.unpin(ref);
      for (const { name, driver, logged } of held.splice(0)) {
        try {
          await (await this.deps.volumes.driver(driver)).unmount(name, ref);
          if (logged) this.unmounted(c.Id, name, driver);
        } catch (err) {
          this.deps.log.error({ err, container: c.Id, volume: name }, "cannot release a volume after a copy");
        }
      }
    };
    const paths = new Map<string, string>();
    try {
      for (const [index, m] of (c.Mounts ?? []).entries()) {
        // an image mount is there while the container runs (its subpath pinned by the start)
        if (m.Type === "image") {
          if (c.State.Running) paths.set(m.Destination, m.Subpath ? posix.join(this.pinDir(c.Id), String(index)) : m.Source);
          continue;
        }
        if (m.Type !== "volume" || !m.Name) continue;
        const rec = this.deps.volumes.get(m.Name);
        const volumePath = await (await this.deps.volumes.driver(rec.Driver)).mount(m.Name, ref);
        const use = { name: m.Name, driver: rec.Driver, logged: false };
        held.push(use);
        paths.set(m.Destination, (await this.subpath(volumePath, m.Subpath, ref, index)).path);
        this.mounted(c.Id, m, rec.Driver);
        use.logged = true;
      }
    } catch (err) {
      await release();
      throw err instanceof EngineError ? err : errors.mountFailed("", (err as Error).message);
    }
    return { paths, release };
  }

  // --- removal -------------------------------------------------------------------------------

  /** After the record is gone: with `removeAnonymous` (`rm -v`, AutoRemove) its anonymous volumes go too. */
  async removed(c: ContainerRecord, removeAnonymous: boolean): Promise<void> {
    await this.unmount(c.Id);
    if (!removeAnonymous) return;
    for (const m of c.Mounts ?? []) {
      if (m.Type !== "volume" || !m.Anonymous || !m.Name) continue;
      await this.deps.volumes.remove(m.Name).catch((err: Error) => {
        // still used by another container, or gone already: it stays, as with Docker
        if (!(err instanceof EngineError && (err.statusCode === 409 || err.statusCode === 404))) {
          this.deps.log.error({ err, container: c.Id, volume: m.Name }, "cannot remove an anonymous volume");
        }
      });
    }
  }

  // --- the OCI spec --------------------------------------------------------------------------

  /** The processSpec tap: the container's binds, volumes and tmpfs mounts replace whatever else would mount there (the runner puts them in order: mountsInOrder). */
  async spec(spec: OciSpec, ctx: SpecContext): Promise<OciSpec> {
    const c = this.deps.containers.find(ctx.containerId);
    const mounts = c?.Mounts ?? [];
    if (mounts.length === 0) return spec;
    const mine = this.active.get(ctx.containerId);
    // read-only mounts: recursively so where the kernel and the runtime can (Docker's default from API 1.44)
    const readOnly = mounts.some((m) => !m.RW && m.Type !== "tmpfs" && !m.ReadOnlyNonRecursive);
    const refusal = !readOnly ? undefined : ctx.runtime?.path ? await recursiveReadOnlyRefusal(ctx.runtime.name, ctx.runtime.path) : "rro is not supported: no runtime binary";
    const rroRefusal = () => refusal;
    const { root: rootfsPropagation, fellBack } = bindPropagation(mounts);
    const ours = mounts.map((m) => ociMount(fellBack.has(m.Destination) ? { ...m, Propagation: "rprivate" } : m, mine?.get(m.Destination)?.path ?? m.Source, rroRefusal));
    const dests = new Set(ours.map((m) => m.destination));
    const replaced = replacedByUserMounts(dests, ctx.hostConfig.IpcMode || ctx.daemon["default-ipc-mode"] || "private");
    return {
      ...spec,
      mounts: [...(spec.mounts ?? []).filter((m) => !replaced(posix.normalize(m.destination))), ...ours],
      ...(rootfsPropagation ? { linux: { ...spec.linux, rootfsPropagation } } : {}),
    };
  }
}

function ociMount(m: ContainerMount, source: string, rroRefusal: () => string | undefined): OciMount {
  const rw = m.RW ? "rw" : m.Type === "tmpfs" || m.ReadOnlyNonRecursive ? "ro" : readOnlyMode(m, rroRefusal);
  if (m.Type === "tmpfs") {
    return { destination: m.Destination, type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "noexec", ...(m.TmpfsOptions ?? []), rw] };
  }
  return { destination: m.Destination, type: "bind", source, options: [m.NonRecursive ? "bind" : "rbind", m.Propagation || "rprivate", rw] };
}

/** A missing bind source and its missing parents, made as folders; those it made go to `owner` when given. */
async function makeBindSource(source: string, owner: Owner | undefined): Promise<void> {
  const first = await mkdir(source, { recursive: true, mode: 0o755 });
  if (!first || !owner) return;
  for (let dir = source; ; dir = posix.dirname(dir)) {
    await lchown(dir, owner.uid, owner.gid);
    if (dir === first || dir === "/") return;
  }
}

/**
 * Fills an empty volume with what the image holds at `dest` (ownership, modes, links kept), as
 * Docker does when a volume is first mounted. `dest` is resolved inside the root filesystem
 * (its symbolic links as if the root were `/`), so an image cannot point the copy at the host.
 */
async function copyUp(rootfs: string, dest: string, volumePath: string): Promise<void> {
  if ((await readdir(volumePath)).length > 0) return;
  const src = await pathInRoot(rootfs, dest);
  const st = await lstat(src).catch(() => undefined);
  if (!st?.isDirectory()) return;
  try {
    await run("cp", ["-a", "--", `${src}/.`, `${volumePath}/`]);
  } catch (err) {
    throw errors.mountFailed(dest, `cannot copy the image's content into the volume: ${String((err as { stderr?: string }).stderr || (err as Error).message).trim()}`);
  }
}

/** The host path of `path` inside `root`, symbolic links resolved with `root` as `/` (at most 40 of them). */
async function pathInRoot(root: string, path: string): Promise<string> {
  const parts = posix.normalize(`/${path}`).split("/").filter(Boolean);
  const done: string[] = [];
  let links = 0;
  while (parts.length > 0) {
    const part = parts.shift()!;
    if (part === "..") {
      done.pop();
      continue;
    }
    if (part === ".") continue;
    const host = posix.join(root, ...done, part);
    const st = await lstat(host).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      if (++links > 40) throw errors.mountFailed(path, "too many levels of symbolic links");
      const target = await readlink(host);
      if (target.startsWith("/")) done.length = 0;
      parts.unshift(...target.split("/").filter(Boolean));
      continue;
    }
    done.push(part);
  }
  return posix.join(root, ...done);
}

/** `rro` where it can be had; else `ro`, or the start refused for a mount that must be recursively read-only. */
function readOnlyMode(m: ContainerMount, rroRefusal: () => string | undefined): "rro" | "ro" {
  const why = rroRefusal();
  if (why && m.ReadOnlyForceRecursive) throw errors.mountInvalidConfig("bind", why);
  return why ? "ro" : "rro";
}
