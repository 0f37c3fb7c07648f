/**
 * A container's create, once its request is validated: what a start would refuse is refused
 * first (runtime name, restart policy, log settings, user namespace settings, networks, links,
 * volumes), before a name or a layer is taken; then the name, the record merged from the
 * request and the image's configuration, the volumes, the container's folder, the writable
 * layer, and the record (a crash in between: core/containers/container-store.ts). Whatever fails
 * after the volumes were made gives them back. The `create` event is the
 * ContainerService's.
 */
import { join } from "node:path";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { ContainerCreateRequest, HostConfig } from "../../core/containers/container-config.js";
import { createEnv, resolveCommand } from "../../core/containers/command.js";
import { healthcheckProblem, mergeHealthcheck, type HealthConfig } from "../../core/containers/healthcheck.js";
import { newState, type ContainerRecord, type ContainerStore } from "../../core/containers/container-store.js";
import { checkCreatePolicy } from "../../core/containers/restart-policy.js";
import { goCleanPath } from "../../core/build/go-text.js";
import { errors } from "../../core/errors.js";
import { killPoint } from "../../core/kill-points.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import type { EndpointConfigRequest } from "../../core/network/network-request.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { ContainerNetworks } from "../network/container-networks.js";
import type { LogDriverSource } from "../plugins/log-drivers.js";
import { checkUsernsSettings, type UsernsRemap } from "../userns/remap.js";
import type { ContainerVolumes } from "../volumes/container-volumes.js";
import type { ContainerLinks } from "./links.js";
import { checkLogSettings, logSettings } from "./log-settings.js";
import { checkCreatePlatform } from "./create-platform.js";
import { checkRuntimeName } from "./runtime-select.js";

export interface CreateDeps {
  hooks: EngineHooks;
  containers: ContainerStore;
  images: ImageStore;
  storage: StorageDriver;
  logDrivers: LogDriverSource;
  config: () => DaemonConfig;
  network: ContainerNetworks;
  /** Binds, volumes and tmpfs mounts of a create. */
  volumes?: ContainerVolumes;
  /** `--userns-remap`: what a user namespace cannot give a container is refused at create. */
  remap?: UsernsRemap;
  /** Legacy links: `HostConfig.Links` resolved to the containers they name. */
  links?: ContainerLinks;
}

/** What a create takes besides its body, from the request's query and API version. */
export interface CreateOptions {
  /** `?platform=`: an image of another platform is not found for the create. */
  platform?: string;
  /** A client before API 1.44: its read-only binds are read-only at their top only. */
  readOnlyBindsNonRecursive?: boolean;
  /**
   * The builder's container for a step of a stage `FROM scratch` (never one of a client's): no
   * image, an empty root filesystem, `Image` empty, as Docker's builder creates one there.
   */
  scratch?: boolean;
}

/**
 * Makes the container (its layer, volumes and record) and returns its record, with the warnings
 * of the create's checks (Docker's `Warnings`); `name` as `?name=` gave it.
 */
export async function createContainer(
  deps: CreateDeps,
  body: ContainerCreateRequest,
  wantedName: string | undefined,
  options: CreateOptions = {},
): Promise<{ record: ContainerRecord; warnings: string[] }> {
  const claim: { name?: string; id?: string } = {};
  try {
    return await create(deps, body, wantedName, options, claim);
  } finally {
    // a create that failed gives its name back (a saved record keeps it: then this does nothing)
    if (claim.name !== undefined) deps.containers.releaseName(claim.name, claim.id!);
  }
}

/** `createContainer`; the name it claims, and for which id, in `claim`. */
async function create(
  deps: CreateDeps,
  body: ContainerCreateRequest,
  wantedName: string | undefined,
  options: CreateOptions,
  claim: { name?: string; id?: string },
): Promise<{ record: ContainerRecord; warnings: string[] }> {
  const { images } = deps;
  // as Docker's daemon checks the request's settings, before it looks for the image: an
  // absolute working directory, kept cleaned (`/a/../b/` as `/b`)
  if (body.WorkingDir) {
    if (!body.WorkingDir.startsWith("/")) throw errors.containerRelativeWorkingDir(body.WorkingDir);
    body.WorkingDir = goCleanPath(body.WorkingDir);
  }
  // a variable without a name (``, `=`, `=foo`), as Docker's opts.ValidateEnv refuses it
  const unnamed = (body.Env ?? []).find((e) => e.split("=")[0] === "");
  if (unnamed !== undefined) throw errors.containerInvalidResource(`invalid environment variable: ${unnamed}`);
  const image = options.scratch ? undefined : images.resolve(body.Image);
  // the image's layers stay until the record names the image (a removal of the image meanwhile
  // leaves them: see keepForNewContainer below)
  const release = image ? images.hold(image.chain) : () => {};
  try {
    return await createOn(deps, body, image, wantedName, options, claim);
  } finally {
    release();
  }
}

async function createOn(
  deps: CreateDeps,
  body: ContainerCreateRequest,
  image: Image | undefined,
  wantedName: string | undefined,
  options: CreateOptions,
  claim: { name?: string; id?: string },
): Promise<{ record: ContainerRecord; warnings: string[] }> {
  const { containers, images, storage } = deps;
  if (image) checkCreatePlatform(body.Image, image.config, options.platform);
  // What the start would refuse is refused now, before a layer or a name is taken.
  checkRuntimeName(deps.config(), body.HostConfig?.Runtime);
  checkCreatePolicy(body.HostConfig);
  // the plugins' checks (devices, resources, namespaces: plugins/runtime-ocirun); they may fill HostConfig
  const { warnings } = await deps.hooks.checkContainerCreate.promise({ request: { ...body, HostConfig: (body.HostConfig ??= {}) }, warnings: [] });
  const base = image?.config.config ?? {};
  const healthcheck = mergeHealthcheck(body.Healthcheck, base.Healthcheck as HealthConfig | undefined);
  const unhealthy = healthcheckProblem(healthcheck);
  if (unhealthy) throw errors.containerInvalidResource(unhealthy);
  const log = logSettings(body.HostConfig ?? {}, deps.config());
  await checkLogSettings(log, deps.logDrivers);
  const networkMode = networkModeOf(body.HostConfig?.NetworkMode);
  checkUsernsSettings(deps.remap, { ...(body.HostConfig ?? {}), NetworkMode: networkMode });
  const networks = deps.network.attachmentsFor(networkMode, endpointsConfig(body, networkMode));
  const linkTargets = deps.links?.resolve(body.HostConfig ?? {}, networkMode) ?? [];
  const mounts = await deps.volumes?.plan(body.HostConfig ?? {}, Object.keys({ ...(base.Volumes ?? {}), ...(body.Volumes ?? {}) }), {
    readOnlyBindsNonRecursive: options.readOnlyBindsNonRecursive === true,
  });
  const id = containers.newId();
  const name = (claim.name = containers.claimName(wantedName, (claim.id = id)));
  const { entrypoint, cmd } = resolveCommand(body, base);
  const args = [...entrypoint, ...cmd];
  // (an empty word is a command: the runtime refuses it at start, as Docker's create leaves it)
  if (args.length === 0) throw errors.containerNoCommand();
  const { HostConfig, NetworkingConfig: _networking, ...config } = body;
  const record: ContainerRecord = {
    Id: id,
    Name: name,
    Created: new Date().toISOString(),
    Path: args[0],
    Args: args.slice(1),
    Config: {
      ...config,
      Hostname: config.Hostname || id.slice(0, 12),
      // (an empty User is the image's, as Docker's merge takes it: the Go client always sends the field)
      User: config.User || base.User || "",
      // (none asked for: the image's as it is, null where it has none, as Docker's merge leaves it)
      Env: config.Env?.length ? createEnv(base.Env ?? [], config.Env) : base.Env ? [...base.Env] : null,
      Cmd: cmd,
      Entrypoint: entrypoint.length ? entrypoint : null,
      WorkingDir: config.WorkingDir || base.WorkingDir || "",
      Labels: { ...(base.Labels ?? {}), ...(config.Labels ?? {}) },
      ExposedPorts: { ...(base.ExposedPorts ?? {}), ...(config.ExposedPorts ?? {}) },
      Volumes: mergeVolumes(config.Volumes, base.Volumes),
      StopSignal: config.StopSignal ?? base.StopSignal,
      ...(healthcheck ? { Healthcheck: healthcheck } : {}),
    },
    // Docker records the log driver in effect at create (the daemon's default unless one was asked
    // for), with the daemon's --log-opt merged in when it is the daemon's driver (its
    // mergeAndVerifyLogConfig): a later daemon with other defaults leaves the container's as they were
    HostConfig: {
      ...(HostConfig ?? {}),
      NetworkMode: networkMode,
      LogConfig: { Type: log.driver, Config: { ...log.options } },
      ...(HostConfig?.PortBindings ? { PortBindings: portBindingsAsStructs(HostConfig.PortBindings) } : {}),
    },
    // (checked all the same; a container with its network disabled is on none, as Docker keeps it)
    ...(networks && !body.NetworkDisabled ? { Networks: networks } : {}),
    ...(linkTargets.length ? { Links: deps.links!.record(name, linkTargets) } : {}),
    Image: image?.id ?? "",
    Driver: storage.name,
    LogPath: join(containers.dir(id), `${id}-json.log`),
    State: newState(),
  };
  // Its volumes are made now, and held against removal until the record names them.
  const made = mounts?.length ? await deps.volumes!.realize(mounts, id) : undefined;
  if (made) record.Mounts = made.mounts;
  if (made) killPoint("create.volumes-made");
  try {
    // The folder on disk first (a crash from here on leaves it without a record, and the next
    // start removes the layer of that id with it), then the writable layer: a container is
    // listed only when it has one.
    await containers.reserve(id);
    killPoint("create.reserved");
    const top = image?.chain.at(-1);
    // A driver refuses options it cannot honour (a 400 naming them) before it makes anything.
    const storageOpts = { ...(HostConfig?.StorageOpt ?? {}) };
    try {
      await storage.create(id, top?.slice("sha256:".length), { writable: true, storageOpts });
      killPoint("create.layer-made");
      await containers.add(record);
      killPoint("create.saved");
      if (image) await images.keepForNewContainer(image);
      // (the images of its image mounts alike)
      for (const mounted of made?.images ?? []) await images.keepForNewContainer(mounted);
    } catch (err) {
      // no container: out of the list again, its layer gone, then its folder
      await storage.remove(id).catch(() => undefined);
      await containers.remove(id);
      throw err;
    }
  } catch (err) {
    made?.release();
    await deps.volumes?.discard(record.Mounts ?? []);
    throw err;
  } finally {
    made?.release();
  }
  return { record, warnings };
}

/**
 * The mode a create records: `default` (or none given) is the default network, `bridge`, as
 * newer Docker records it, on a daemon without one (`--bridge=none`) too: such a container
 * runs with its loopback alone, with no network events, and may be connected to other
 * networks, as Docker's (container-networks.ts, onNoDefaultNetwork).
 */
function networkModeOf(asked: string | undefined): string {
  return asked && asked !== "default" ? asked : "bridge";
}

/** EndpointsConfig by network, `default` (as some clients write it) read as the default network's mode. */
function endpointsConfig(body: ContainerCreateRequest, networkMode: string): Record<string, EndpointConfigRequest | null> {
  const given = body.NetworkingConfig?.EndpointsConfig ?? {};
  return Object.fromEntries(Object.entries(given).map(([k, v]) => [k === "default" ? networkMode : k, v]));
}

/**
 * Docker's merge of the volumes: the image's are added to the request's, and without any in the
 * request the image's are taken as they are, null when it has none (inspect shows `null`, not `{}`).
 */
function mergeVolumes(asked: Record<string, object> | null | undefined, image: Record<string, object> | null | undefined): Record<string, object> | null {
  if (!asked || !Object.keys(asked).length) return image ?? null;
  return { ...asked, ...(image ?? {}) };
}

/** Each port binding with both its fields, as Docker's daemon keeps Go's struct (`{}` is `{"HostIp":"","HostPort":""}`). */
function portBindingsAsStructs(bindings: NonNullable<HostConfig["PortBindings"]>): NonNullable<HostConfig["PortBindings"]> {
  return Object.fromEntries(
    Object.entries(bindings).map(([port, list]) => [port, list === null ? null : list.map((b) => ({ HostIp: b.HostIp ?? "", HostPort: b.HostPort ?? "" }))]),
  );
}
