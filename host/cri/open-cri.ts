/**
 * `--cri-supervisor`: engined serves the Kubernetes CRI (runtime.v1) on `<exec-root>/cri.sock`
 * (docs/cluster.md says why engined serves it and not the supervisor process). What it serves
 * is put together here from the daemon's parts: the image store, the registry client, the
 * storage driver, the runtime configuration.
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { ImageStore } from "../../core/images/image-store.js";
import type { RuleHost } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { RegistryService } from "../registry/registry.js";
import type { CniDirs } from "./cni/cni-config.js";
import { serveCri, type CriServer } from "./cri-server.js";
import { criImageHandlers } from "./image-service.js";
import { runtimeInfoHandlers } from "./runtime-info.js";
import { sandboxHandlers, sandboxStatus } from "./sandbox/sandbox-handlers.js";
import { containerHandlers, containerStatus, sandboxContainers } from "./containers/container-handlers.js";
import { ContainerEvents } from "./events/container-events.js";
import { CriContainerService } from "./containers/container-service.js";
import { SandboxService } from "./sandbox/sandbox-service.js";
import { PodInits } from "./sandbox/pod-init.js";
import { PodCidrs } from "./pod-cidr.js";
import { CriStatsReader } from "./stats/cri-stats.js";
import { statsHandlers } from "./stats/stats-handlers.js";
import { loadTlsOptions } from "../listeners/tls-options.js";
import { streamHandlers } from "./streaming/stream-handlers.js";
import { serveStreams, type StreamServer } from "./streaming/stream-server.js";
import { streamSessions } from "./streaming/stream-sessions.js";
import { StreamTokens } from "./streaming/stream-tokens.js";

export interface CriDeps {
  config: () => DaemonConfig;
  host: RuleHost;
  dataRoot: string;
  execRoot: string;
  log: Logger;
  hooks: EngineHooks;
  images: ImageStore;
  storage: StorageDriver;
  runtime: RuntimeDriver;
  registry: RegistryService;
  /** Whether a Docker container uses the image. */
  dockerUsesImage: (id: string) => boolean;
  /** The API socket's group, and whether it was asked for (a missing one is then an error). */
  group: string;
  groupGiven: boolean;
}

export function criSocketPath(execRoot: string): string {
  return join(execRoot, "cri.sock");
}

export interface OpenedCri {
  server: CriServer;
  /** The streaming server of Exec, Attach and PortForward. */
  streams: StreamServer;
  /** A CRI container using the image, if any (a `docker rmi` of it is refused, even forced). */
  imageUser(id: string): string | undefined;
  close(): Promise<void>;
}

export async function openCri(deps: CriDeps): Promise<OpenedCri> {
  const cniDirs = (): CniDirs => ({ confDir: deps.config()["cri-cni-conf-dir"], binDirs: deps.config()["cri-cni-bin-dir"] });
  const images = criImageHandlers({
    store: deps.images,
    storage: deps.storage,
    storageHome: join(deps.dataRoot, deps.storage.name),
    registry: deps.registry,
    hooks: deps.hooks,
    limits: () => {
      const c = deps.config();
      return { downloads: c["max-concurrent-downloads"], attempts: c["max-download-attempts"], disablePigz: c["disable-pigz"] };
    },
    inUse: (id) => deps.dockerUsesImage(id) || containers.usesImage(id),
  });
  const sandboxes = new SandboxService({ dataRoot: deps.dataRoot, execRoot: deps.execRoot, config: deps.config, cniDirs, log: deps.log, ipRanges: () => podCidrs.ipRanges() });
  const podCidrs = new PodCidrs(deps.dataRoot);
  await sandboxes.restore();
  const events = new ContainerEvents((sandboxId) => {
    const pod = sandboxes.store.get(sandboxId);
    return { podSandboxStatus: pod ? sandboxStatus(pod) : null, containersStatuses: containers.ofSandbox(sandboxId).map(containerStatus) };
  });
  const containers = new CriContainerService({
    dataRoot: deps.dataRoot, execRoot: deps.execRoot, config: deps.config, host: deps.host, images: deps.images, storage: deps.storage, runtime: deps.runtime, sandboxes, log: deps.log,
    events: (type, id, sandboxId, at) => {
      try {
        events.publish(type, id, sandboxId, at);
      } catch (err) {
        deps.log.warn({ err, container: id, type }, "sending a CRI container event failed");
      }
    },
  });
  sandboxes.containers = sandboxContainers(containers);
  sandboxes.inits = new PodInits({ client: () => containers.link.client(), forget: (id) => containers.link.forget(id), runtime: deps.runtime, host: deps.host, config: deps.config });
  await containers.restore();
  await sandboxes.restoreInits();
  const tokens = new StreamTokens();
  const daemon = deps.config();
  const tlsCert = daemon["cri-stream-tls-cert"];
  const streams = await serveStreams({
    address: daemon["cri-stream-address"], port: daemon["cri-stream-port"], tokens, log: deps.log,
    ...(tlsCert ? { tls: loadTlsOptions({ verify: false, cacert: "", cert: tlsCert, key: daemon["cri-stream-tls-key"] }).modern } : {}),
    handle: streamSessions({ containers, sandboxes, runtime: deps.runtime, log: deps.log }),
  });
  const stats = new CriStatsReader({ storage: deps.storage, storageHome: join(deps.dataRoot, deps.storage.name) });
  const runtime = {
    ...runtimeInfoHandlers({ config: deps.config, host: deps.host, cniDirs, eventListeners: () => events.listenerCount, podCidrs: () => podCidrs.list() }),
    ...podCidrs.handlers(),
    ...sandboxHandlers(sandboxes),
    ...containerHandlers(containers),
    ...statsHandlers(stats, containers, sandboxes),
    ...streamHandlers({ containers, sandboxes, tokens, url: streams.url }),
  };
  const server = await serveCri({
    socket: criSocketPath(deps.execRoot), group: deps.group, groupGiven: deps.groupGiven, log: deps.log, runtime, runtimeStreams: events.handlers(), image: images, beforeClose: () => events.close(),
  }).catch(async (err: unknown) => {
    await streams.close();
    throw err;
  });
  deps.log.info({ socket: server.socket }, `CRI listen on unix://${server.socket}`);
  deps.log.info({ url: streams.base }, `CRI streaming server listen on ${streams.base}`);
  return {
    server,
    streams,
    imageUser: (id) => containers.imageUser(id),
    close: async () => {
      await server.close();
      await streams.close();
      await containers.close();
    },
  };
}
