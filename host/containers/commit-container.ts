/**
 * `POST /commit`: a container's writable layer as a new image. The storage driver's diff of the
 * container (an OCI layer tar, deleted files as whiteouts) becomes a layer on the chain of the
 * container's image; the new image config is the parent's with that layer's diff ID and a history
 * entry added, the container's configuration (with the `changes` applied) as its `config`, and,
 * as Docker writes them, `container` and `container_config`. The container is paused while its
 * layer is read, unless asked not to be. What the runtime and the init layer made in the layer
 * (layer-mount-points.ts) is left out: a container that changed nothing commits no layer.
 */
import { rm } from "node:fs/promises";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { EngineError, errors } from "../../core/errors.js";
import { killPoint } from "../../core/kill-points.js";
import type { EngineHooks } from "../../core/hooks.js";
import { digestOfFile } from "../../core/images/blob-store.js";
import type { ContainerConfig, ImageConfig } from "../../core/images/image-config.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { familiarName, repoTagReference } from "../../core/images/reference.js";
import { ENGINE_VERSION } from "../../core/version.js";
import { imageTagEvent } from "../images/image-events.js";
import { diffToFile, isEmptyTar } from "../storage/diff-file.js";
import { withoutMountPoints } from "./layer-mount-points.js";
import { applyChanges } from "../images/changes.js";
import { containerEvent } from "./container-events.js";
import { mergeCommitConfig } from "./commit-config.js";

/** What pauses a container (the runner's freezer). */
export interface Pauser {
  /** `forCommit`: the commit's own pause (see ContainerRecord.CommitPause). */
  pause(c: ContainerRecord, ref: string, forCommit?: boolean): Promise<void>;
  unpause(c: ContainerRecord, ref: string): Promise<void>;
}

export interface CommitDeps {
  images: ImageStore;
  storage: StorageDriver;
  pauser: Pauser;
  hooks: EngineHooks;
}

export interface CommitOptions {
  /** The container as the client named it (for the pause's errors). */
  ref: string;
  repo?: string;
  tag?: string;
  comment?: string;
  author?: string;
  pause: boolean;
  /** Dockerfile instructions, one or more lines each. */
  changes: readonly string[];
  /** A configuration sent with the request: it replaces the container's, which fills what it leaves out. */
  config?: ContainerConfig | null;
}

export async function commitContainer(deps: CommitDeps, c: ContainerRecord, opts: CommitOptions): Promise<Image> {
  if (c.State.Dead) throw errors.containerCommitConflict(c.Id, "Dead");
  if (c.State.Status === "removing") throw errors.containerCommitConflict(c.Id, "being removed");
  // Everything the request can get wrong is refused before the container is paused.
  const target = repoTagReference(opts.repo, opts.tag);
  const lines = opts.changes.flatMap((change) => change.split(/\r?\n/)).filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  const containerConfig = c.Config as ContainerConfig;
  let config = applyChanges(opts.config ?? containerConfig, lines);
  if (opts.config) config = mergeCommitConfig(config, containerConfig);
  const parent = deps.images.resolve(c.Image);

  let tarFile: string | undefined;
  try {
    tarFile = await readLayer(deps, c, opts);
    killPoint("commit.layer-read");
    const empty = isEmptyTar(tarFile);
    const diffId = empty ? undefined : (await digestOfFile(tarFile)).digest;
    const configBytes = Buffer.from(JSON.stringify(childConfig(parent.config, c, config, opts, diffId)));
    const image = await deps.images.commit(configBytes, parent, empty ? undefined : tarFile, target ? [target] : []);
    if (target) deps.hooks.event.call(imageTagEvent(image, target));
    deps.hooks.event.call(containerEvent(c, "commit", { comment: opts.comment ?? "", imageID: image.id, imageRef: target ? familiarName(target) : "" }));
    return image;
  } finally {
    if (tarFile) await rm(tarFile, { force: true }); // on the thread pool: a long system call for a big file
  }
}

/** The container's layer as a tar file, with the container paused meanwhile when it runs (and asked for). */
async function readLayer(deps: CommitDeps, c: ContainerRecord, opts: CommitOptions): Promise<string> {
  let pausing = opts.pause && c.State.Running && !c.State.Paused;
  if (pausing) {
    await deps.pauser.pause(c, opts.ref, true).catch((err: unknown) => {
      // It exited between the check and the freeze (a short command committed at once, as
      // docker-py's tests do): its layer no longer changes, read as Docker reads a stopped one's.
      if (!(err instanceof EngineError && err.code === errors.containerStateNotRunning.code)) throw err;
      pausing = false;
    });
  }
  let file: string;
  try {
    file = await diffToFile(deps.storage, c.Id, deps.images.tmpDir, "commit");
  } finally {
    // An exit meanwhile thaws it (the runner's clean-up of a paused container's end): nothing left to undo
    if (pausing) {
      await deps.pauser.unpause(c, opts.ref).catch((err: unknown) => {
        const gone = err instanceof EngineError && (err.code === errors.containerNotPaused.code || err.code === errors.containerStateNotRunning.code);
        if (!gone) throw err;
      });
    }
  }
  // the init layer's entries and the network files' mount points are not the container's
  // changes; the tar is the daemon's own by now, so the container runs again meanwhile
  await withoutMountPoints(file).catch(async (err: unknown) => {
    await rm(file, { force: true });
    throw err;
  });
  return file;
}

/** The parent's config with the new layer and history entry, the container's configuration and the commit's fields. */
function childConfig(parent: ImageConfig, c: ContainerRecord, config: ContainerConfig, opts: CommitOptions, diffId: string | undefined): ImageConfig {
  const created = new Date().toISOString();
  const entry = {
    created,
    ...(opts.author ? { author: opts.author } : {}),
    created_by: [c.Config.Cmd ?? []].flat().join(" "),
    ...(opts.comment ? { comment: opts.comment } : {}),
    ...(diffId ? {} : { empty_layer: true }),
  };
  return {
    architecture: parent.architecture,
    ...(parent.variant ? { variant: parent.variant } : {}),
    os: parent.os ?? "linux",
    ...(opts.author ? { author: opts.author } : {}),
    created,
    docker_version: ENGINE_VERSION,
    config,
    container: c.Id,
    container_config: c.Config,
    rootfs: { type: "layers", diff_ids: [...parent.rootfs.diff_ids, ...(diffId ? [diffId] : [])] },
    history: [...(parent.history ?? []), entry],
  };
}
