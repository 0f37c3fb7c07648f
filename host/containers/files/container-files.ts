/**
 * `docker cp` and `docker export` on a container's files: stat a path, tar a path, extract a tar
 * into a directory, tar the whole root. Everything inside the root goes through scoped-fs (never
 * a host path string the container could redirect).
 *
 * Where the root is: a running container's own mount (opened in the runner's queue, then used
 * outside it: the descriptor keeps the mount usable, and an exit is not held up); a stopped
 * container's layer mounted for the operation by the runner, which keeps a start of the same
 * container waiting until the operation (a download too) is done.
 * `docker cp` sees the container's volumes, binds and network files on that root, as Docker's
 * does (container-view.ts says how they are mounted safely, view-mounts.ts which they are);
 * `docker export` only the root filesystem, as Docker's.
 */
import { closeSync, lstatSync, readlinkSync, statSync, type BigIntStats } from "node:fs";
import { dirname, posix } from "node:path";
import type { Readable } from "node:stream";
import { LayerEntryError } from "../../../core/archive/index.js";
import type { ContainerRecord } from "../../../core/containers/container-store.js";
import { EngineError, errors } from "../../../core/errors.js";
import { clientArchiveError } from "../../client-archive-error.js";
import type { EngineHooks } from "../../../core/hooks.js";
import { containerEvent } from "../container-events.js";
import { archiveInput } from "./archive-input.js";
import { containerOwner } from "./copy-owner.js";
import { pathStat, type PathStat } from "./path-stat.js";
import { OverwriteError, extractScoped, type ExtractResult } from "./scoped-extract.js";
import { packScoped } from "./scoped-pack.js";
import { at, ScopedPathError, ScopedRoot, type Resolved, type ScopedDir } from "./scoped-fs.js";
import type { IdMap } from "../../../core/userns/id-map.js";
import { openContainerView, type ContainerView } from "./container-view.js";
import { checkWritable, viewMounts, type ViewMountSources } from "./view-mounts.js";

/** The runner's access to a container's root filesystem (ContainerRunner.withRootfs). */
export interface RootfsSource {
  withRootfs<T>(c: ContainerRecord, fn: (rootfs: string, running: boolean) => Promise<T>): Promise<T>;
}

export interface ContainerFilesDeps {
  runner: RootfsSource;
  hooks: EngineHooks;
  disablePigz: () => boolean;
  /**
   * The daemon's user namespace map (`--userns-remap`): a tar out gives owners as container ids,
   * a tar in is written with host ids (Docker applies the daemon's map whatever the container's
   * UsernsMode: its layer is remapped either way).
   */
  idMap?: IdMap;
  /** What the container's mounts are, for `docker cp` to see them (without: the root filesystem alone). */
  mounts?: ViewMountSources;
  /** A folder of the daemon's where a copy's view of a container is mounted (the exec root's). */
  scratch?: string;
}

export interface ExtractRequest {
  path: string;
  noOverwriteDirNonDir: boolean;
  copyUIDGID: boolean;
  body: Readable;
}

/**
 * The path as Docker takes it: absolute in the container, with a trailing `/` or `/.` kept (they
 * mean "the directory itself", following a symlink in the last place). One with a NUL byte
 * names no file (the kernel takes none): the client's mistake.
 */
function requestPath(path: string): { abs: string; followLast: boolean; base: string } {
  if (path.includes("\0")) throw errors.containerPathInvalid(JSON.stringify(path), "a path holds no NUL byte");
  const cleaned = posix.join("/", path);
  // Go's filepath.Base of the path as given is ".": `.`, `a/.`, and with slashes after (`./`, `/./`)
  const last = path.replace(/\/+$/, "");
  const trailingDot = path === "" || last === "." || last.endsWith("/.");
  const trailingSlash = !trailingDot && path.endsWith("/") && cleaned !== "/";
  const abs = trailingDot ? `${cleaned === "/" ? "" : cleaned}/.` : trailingSlash ? `${cleaned}/` : cleaned;
  const base = trailingDot ? "." : cleaned === "/" ? "/" : posix.basename(cleaned);
  return { abs, followLast: trailingDot || trailingSlash || cleaned === "/", base };
}

/**
 * The root at `rootfs`, checked to be a mount (not the empty directory under it). A running
 * container's is its runtime's mount, which goes when the container exits: gone or no longer
 * mounted, the container stopped since its state was read (a kill or stop that came at the
 * same moment), which is a conflict to try again, not the daemon's fault.
 */
function openMountedRoot(rootfs: string, id: string, running: boolean): ScopedRoot {
  let root: ScopedRoot | undefined;
  try {
    root = ScopedRoot.open(rootfs);
    if (lstatSync(rootfs).dev !== statSync(dirname(rootfs)).dev) return root;
  } catch (e) {
    if (!(running && (e as NodeJS.ErrnoException).code === "ENOENT")) throw e;
  }
  root?.close();
  throw running ? errors.containerStoppedMeanwhile(id) : errors.apiInternal(`the root filesystem at ${rootfs} is not mounted`);
}

export class ContainerFiles {
  constructor(private readonly deps: ContainerFilesDeps) {}

  /**
   * Runs `work` with the container's root open; see the file's comment for where it is. With
   * `mounts`, the root is the container's view with its mounts (docker cp); else its root
   * filesystem alone (export).
   */
  private async withRoot<T>(c: ContainerRecord, work: (root: ScopedRoot) => Promise<T>, opts: { mounts: boolean } = { mounts: true }): Promise<T> {
    let handed: { root: ScopedRoot; done: () => Promise<void> } | undefined;
    const result = await this.deps.runner.withRootfs(c, async (rootfs, running) => {
      const open = await this.openRoot(c, rootfs, opts.mounts, running);
      if (running) {
        handed = open;
        return undefined;
      }
      try {
        return { value: await work(open.root) };
      } finally {
        await open.done();
      }
    });
    if (!handed) return result!.value;
    try {
      return await work(handed.root);
    } finally {
      await handed.done();
    }
  }

  /** The root at `rootfs` (checked to be mounted), with the container's mounts on it when asked and it has any. */
  private async openRoot(c: ContainerRecord, rootfs: string, withMounts: boolean, running: boolean): Promise<{ root: ScopedRoot; done: () => Promise<void> }> {
    const plain = openMountedRoot(rootfs, c.Id, running);
    let sources: Awaited<ReturnType<typeof viewMounts>> | undefined;
    try {
      sources = withMounts && this.deps.mounts && this.deps.scratch ? await viewMounts(c, this.deps.mounts) : undefined;
    } catch (e) {
      plain.close();
      throw e;
    }
    if (!sources || sources.mounts.length === 0) {
      await sources?.release();
      return { root: plain, done: async () => plain.close() };
    }
    plain.close();
    let view: ContainerView;
    try {
      view = await openContainerView(rootfs, sources.mounts, this.deps.scratch!);
    } catch (e) {
      await sources.release();
      throw e;
    }
    return {
      root: view.root,
      done: async () => {
        await view.close();
        await sources.release();
      },
    };
  }

  /** Resolves a requested path, with Docker's errors for missing and bad paths. */
  private resolve(root: ScopedRoot, ref: string, path: string, followLast: boolean): Resolved {
    try {
      return root.resolve(path, { followLast });
    } catch (e) {
      throw pathError(e, ref, path);
    }
  }

  /** The entry `r` names (its lstat), or the file-not-found error. */
  private lstat(r: Resolved, ref: string, shown: string, followLast: boolean): BigIntStats {
    const st = r.name === "" ? undefined : lstatSync(at(r.dirFd, r.name), { bigint: true, throwIfNoEntry: false });
    if (r.name !== "" && !st) throw errors.containerFileNotFound(shown, ref);
    // `dir/` on something that is not a directory
    if (st && followLast && !st.isDirectory()) throw errors.containerPathInvalid(shown, "not a directory");
    return st ?? (statSync(`/proc/self/fd/${r.dirFd}`, { bigint: true }) as BigIntStats);
  }

  private statOf(root: ScopedRoot, r: Resolved, st: BigIntStats, base: string, abs: string): PathStat {
    let linkTarget = "";
    if (st.isSymbolicLink()) {
      try {
        const t = root.resolve(abs, { followLast: true });
        linkTarget = t.path;
        t.close();
      } catch {
        linkTarget = posix.resolve(posix.dirname(r.path), linkText(r));
      }
    }
    return pathStat(base, st, linkTarget);
  }

  /** `HEAD /containers/{id}/archive`. */
  stat(c: ContainerRecord, ref: string, path: string): Promise<PathStat> {
    const req = requestPath(path);
    return this.withRoot(c, async (root) => {
      const r = this.resolve(root, ref, req.abs, req.followLast);
      try {
        return this.statOf(root, r, this.lstat(r, ref, path, req.followLast), req.base, req.abs);
      } finally {
        r.close();
      }
    });
  }

  /**
   * `GET /containers/{id}/archive`: `send` gets the stat and the tar once the path is found;
   * this settles when the tar has been read to its end (or abandoned).
   */
  archive(c: ContainerRecord, ref: string, path: string, send: (stat: PathStat, tar: Readable) => Promise<void>): Promise<void> {
    const req = requestPath(path);
    return this.withRoot(c, async (root) => {
      const r = this.resolve(root, ref, req.abs, req.followLast);
      let stat: PathStat;
      try {
        stat = this.statOf(root, r, this.lstat(r, ref, path, req.followLast), req.base, req.abs);
      } catch (e) {
        r.close();
        throw e;
      }
      const tar = packScoped(r, { rebase: req.base, release: () => r.close(), idMap: this.deps.idMap });
      this.deps.hooks.event.call(containerEvent(c, "archive-path"));
      await send(stat, tar);
    });
  }

  /**
   * `PUT /containers/{id}/archive`: the body's tar extracted into the directory `path`; the
   * result lists the entries left out (device nodes, FIFOs, hard links to them).
   */
  extract(c: ContainerRecord, ref: string, req: ExtractRequest): Promise<ExtractResult> {
    const { abs } = requestPath(req.path);
    return this.withRoot(c, async (root) => {
      const r = this.resolve(root, ref, abs, true);
      let dest: string;
      try {
        if (r.name !== "") {
          if (!lstatSync(at(r.dirFd, r.name), { throwIfNoEntry: false })) throw errors.containerFileNotFound(req.path, ref);
          throw errors.containerExtractNotDirectory();
        }
        dest = r.path;
      } finally {
        r.close();
      }
      checkWritable(c, dest);
      const owner = req.copyUIDGID ? containerOwner(root, c.Config.User) : undefined;
      let dir: ScopedDir;
      try {
        dir = root.openDir(dest);
      } catch (e) {
        throw pathError(e, ref, req.path); // swapped since it was checked
      }
      let result: ExtractResult;
      try {
        result = await extractScoped(dir, archiveInput(req.body, { disablePigz: this.deps.disablePigz() }), {
          noOverwriteDirNonDir: req.noOverwriteDirNonDir,
          owner,
          idMap: this.deps.idMap,
        });
      } catch (e) {
        if (e instanceof OverwriteError || e instanceof LayerEntryError) throw errors.containerArchiveInvalid(e.message);
        // a body that is no tar, cut short or corrupt compressed: the client's mistake too
        throw clientArchiveError(e, errors.containerArchiveInvalid);
      } finally {
        dir.close();
      }
      this.deps.hooks.event.call(containerEvent(c, "extract-to-dir"));
      return result;
    });
  }

  /** `GET /containers/{id}/export`: the tar of the whole root filesystem; settles when it is read. */
  export(c: ContainerRecord, send: (tar: Readable) => Promise<void>): Promise<void> {
    return this.withRoot(
      c,
      async (root) => {
        const fd = root.reopen();
        const tar = packScoped({ dirFd: fd, name: "" }, { rebase: "", release: () => closeSync(fd), idMap: this.deps.idMap });
        this.deps.hooks.event.call(containerEvent(c, "export"));
        await send(tar);
      },
      { mounts: false },
    );
  }
}

/** A symlink's own text (when its target cannot be resolved: Docker then reports it joined lexically). */
function linkText(r: Resolved): string {
  return readlinkSync(at(r.dirFd, r.name));
}

/** A failed resolution as the API reports it. */
function pathError(e: unknown, ref: string, path: string): EngineError {
  if (e instanceof EngineError) return e;
  if (e instanceof ScopedPathError) {
    if (e.code === "ENOENT") return errors.containerFileNotFound(path, ref);
    if (e.code === "ENOTDIR") return errors.containerPathInvalid(path, "not a directory");
    if (e.code === "ELOOP") return errors.containerPathInvalid(path, "too many levels of symbolic links");
    if (e.code === "ENAMETOOLONG") return errors.containerPathInvalid(path, "file name too long");
    return errors.containerPathInvalid(path, e.message);
  }
  return errors.apiInternal((e as Error).message);
}
