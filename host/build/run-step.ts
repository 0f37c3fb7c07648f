/**
 * `RUN`: the command runs in a container made through the container service from the stage's
 * image (the same runtime, networks and limits as any container, with the build's network
 * mode and resources), its output goes to the build's stream as it comes (stderr in red), and
 * its changes are committed as the step's layer. The container goes once the step is done
 * (`rm`); one that failed stays for the user to look into, unless `forcerm`, as with Docker.
 * A step that changes only the configuration commits through a container too, never started,
 * and so does WORKDIR (the container's create makes the folder).
 */
import { rmSync } from "node:fs";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { ContainerCreateRequest, HostConfig } from "../../core/containers/container-config.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { errors } from "../../core/errors.js";
import type { ContainerConfig } from "../../core/images/image-config.js";
import type { Image } from "../../core/images/image-store.js";
import type { ContainerService } from "../containers/container-service.js";
import { spoolReader } from "../containers/spool-reader.js";
import { diffToFile } from "../storage/diff-file.js";
import type { BuildOutput } from "./build-output.js";
import { withoutMountPoints } from "../containers/layer-mount-points.js";

export interface RunDeps {
  containers: ContainerService;
  storage: StorageDriver;
  /** A private folder for the layer tars. */
  tmpDir: string;
}

export interface RunRequest {
  image: Image;
  /** The stage's configuration (environment, user, working directory, volumes...). */
  config: ContainerConfig;
  /** What runs: the shell and the text, or the exec form's words. */
  command: string[];
  /** Build args for the environment (`NAME=value`). */
  argsEnv: string[];
  /** The build's host settings: network mode, resources, extra hosts. */
  hostConfig: HostConfig;
  remove: boolean;
  forceRemove: boolean;
  signal: AbortSignal;
}

/** A step's container, made: its ID, and its removal once the step's image is committed or not (Docker's builder removes it after the commit). */
export interface StepContainer {
  containerId: string;
  release: (committed: boolean) => Promise<void>;
}

/** Runs the command; resolves with the container's layer as a tar file (the caller removes it) and the container, to release after the commit. */
export async function runInContainer(deps: RunDeps, out: BuildOutput, req: RunRequest): Promise<StepContainer & { layerTar: string }> {
  const body: ContainerCreateRequest = {
    ...(req.config as object),
    Image: req.image.id,
    Cmd: req.command,
    // The command is the whole process: the image's entrypoint takes no part, nor its health check.
    Entrypoint: [""],
    Env: [...(req.config.Env ?? []), ...req.argsEnv],
    Healthcheck: { Test: ["NONE"] },
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: req.hostConfig,
  } as ContainerCreateRequest;
  // a client gone meanwhile (the step's cache lookup takes a while): no container for a cancelled build, as Docker's checks between steps
  if (req.signal.aborted) throw errors.buildCancelled();
  const { record: c } = await deps.containers.create(body);
  out.arrow(`Running in ${c.Id.slice(0, 12)}`);
  let ok = false;
  try {
    // Docker's builder attaches to the container's output before it starts it
    deps.containers.attached(c);
    const code = await runAndStream(deps.containers, c, out, req.signal);
    if (code !== 0) throw errors.buildRunFailed(req.command.join(" "), code);
    const layerTar = await containerLayer(deps, c.Id, "run");
    ok = true;
    return { layerTar, containerId: c.Id, release: (committed) => releaseStepContainer(deps, out, c.Id, committed, req) };
  } finally {
    if (!ok) await releaseStepContainer(deps, out, c.Id, false, req);
  }
}

export interface ConfigStepRequest {
  /** The stage's image; none for a stage `FROM scratch` before its first layer. */
  image: Image | undefined;
  /** The step's configuration as it is probed and recorded (its `Cmd` the `#(nop)` comment). */
  config: ContainerConfig;
  hostConfig: HostConfig;
  remove: boolean;
  forceRemove: boolean;
  signal: AbortSignal;
}

/**
 * A step that changes only the configuration (LABEL, ENV, CMD...) commits through a container of
 * its own, as Docker's classic builder does: made from the stage's image with the step's
 * configuration, never started, and removed as a RUN step's is (its create and destroy events, its
 * `Running in` and `Removing intermediate container` lines), after the step's commit. A stage
 * `FROM scratch` with no layer yet has it made from no image (an empty root filesystem), as
 * Docker's builder creates it with an empty image.
 */
export async function configInContainer(deps: RunDeps, out: BuildOutput, req: ConfigStepRequest): Promise<StepContainer> {
  if (req.signal.aborted) throw errors.buildCancelled();
  const body = { ...(req.config as object), Image: req.image?.id ?? "", HostConfig: req.hostConfig } as ContainerCreateRequest;
  const { record: c } = await deps.containers.create(body, undefined, req.image ? {} : { scratch: true });
  out.arrow(`Running in ${c.Id.slice(0, 12)}`);
  return { containerId: c.Id, release: (committed) => releaseStepContainer(deps, out, c.Id, committed, req) };
}

/**
 * WORKDIR: the step's container is made with the new working directory, which its create makes
 * (as Docker's builder has ContainerCreateWorkdir make it), and its layer is the step's: the folder
 * and those made on the way, or nothing when it was there (without the init layer's entries, as a
 * RUN's).
 */
export async function workdirInContainer(deps: RunDeps, out: BuildOutput, req: ConfigStepRequest): Promise<StepContainer & { layerTar: string }> {
  const made = await configInContainer(deps, out, req);
  try {
    return { ...made, layerTar: await containerLayer(deps, made.containerId, "workdir") };
  } catch (err) {
    await made.release(false);
    throw err;
  }
}

/** The container's changes as a tar file (the caller removes it), without the mount points and init layer entries its create and start made. */
async function containerLayer(deps: RunDeps, id: string, kind: string): Promise<string> {
  const layerTar = await diffToFile(deps.storage, id, deps.tmpDir, kind);
  try {
    await withoutMountPoints(layerTar);
  } catch (err) {
    rmSync(layerTar, { force: true });
    throw err;
  }
  return layerTar;
}

/** A step's container removed when the build says so (`rm` after a commit, `forcerm` always), as Docker's builder removes it after each step. */
async function releaseStepContainer(deps: RunDeps, out: BuildOutput, id: string, ok: boolean, req: { remove: boolean; forceRemove: boolean; signal: AbortSignal }): Promise<void> {
  if ((ok && req.remove) || req.forceRemove || req.signal.aborted) {
    await deps.containers.remove(deps.containers.get(id), { force: true, volumes: true }).catch(() => undefined);
    if (ok || req.forceRemove) out.stream(`Removing intermediate container ${id.slice(0, 12)}\n`);
  }
}

/** Starts the container with its output followed from the first byte; its exit code. */
async function runAndStream(containers: ContainerService, c: ContainerRecord, out: BuildOutput, signal: AbortSignal): Promise<number> {
  const follow = new AbortController();
  const stopFollowing = () => follow.abort();
  signal.addEventListener("abort", stopFollowing, { once: true });
  let exited!: () => void;
  const producerDone = new Promise<void>((r) => (exited = r));
  const lines = spoolReader(containers, c).read({ follow: true, stdout: true, stderr: true, producerDone, signal: follow.signal });
  const pump = (async () => {
    for await (const m of lines) {
      const text = m.line.toString("utf8") + (m.partial ? "" : "\n");
      if (m.stream === "stderr") out.stderr(text);
      else out.stream(text);
      // read on only as the client reads (the container's output waits in its spool meanwhile)
      await out.ready();
    }
  })();
  try {
    await containers.start(c);
    const code = await containers.wait(containers.get(c.Id), "not-running", signal);
    exited();
    await pump;
    return code;
  } catch (err) {
    exited();
    follow.abort();
    await pump.catch(() => undefined);
    if (signal.aborted) await containers.kill(containers.get(c.Id), c.Id, "SIGKILL").catch(() => undefined);
    throw err;
  } finally {
    signal.removeEventListener("abort", stopFollowing);
  }
}
