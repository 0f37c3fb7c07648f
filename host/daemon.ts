/**
 * One running daemon, put together from its configuration: roots and pid file, plugins,
 * the API, the listeners. `startDaemon` undoes what it did when a later step fails, and the
 * daemon's `stop` undoes all of it, so that a test (or a second daemon on the same host) can
 * start and stop daemons without leaving anything behind.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { errors } from "../core/errors.js";
import { ContainerStore } from "../core/containers/container-store.js";
import { ImageStore } from "../core/images/image-store.js";
import { containerRunRoutes } from "./api/routes/container-run.js";
import { containerOpsRoutes } from "./api/routes/container-ops.js";
import { checkpointRoutes } from "./api/routes/checkpoints.js";
import { containerRoutes } from "./api/routes/containers.js";
import { eventRoutes } from "./api/routes/events.js";
import { commitRoutes } from "./api/routes/commit.js";
import { containerFileRoutes } from "./api/routes/container-files.js";
import { execRoutes } from "./api/routes/exec.js";
import { ExecSessions } from "./containers/exec-sessions.js";
import { networkRoutes } from "./api/routes/networks.js";
import { volumeRoutes } from "./api/routes/volumes.js";
import { pluginRoutes } from "./api/routes/plugins.js";
import { ManagedPlugins } from "./managed-plugins/plugin-service.js";
import { openVolumes } from "./volumes/open-volumes.js";
import { openDevices } from "./devices/open-devices.js";
import { tapCreateChecks } from "./containers/create-checks.js";
import { tapSharedNamespaces } from "./containers/shared-namespaces.js";
import { tapClusterInfo } from "./cluster/cluster-info.js";
import { resolveAdvertiseAddr } from "./cluster/advertise-addr.js";
import { volumesWithUsage } from "./volumes/volume-view.js";
import { ContainerRunner } from "./containers/runner.js";
import { openBuilder } from "./build/open-builder.js";
import { buildRoutes } from "./api/routes/build.js";
import { buildPruneRoute } from "./api/routes/build-prune.js";
import { openBuildCache } from "./build/open-build-cache.js";
import { ContainerService } from "./containers/container-service.js";
import { ContainerLinks } from "./containers/links.js";
import { EventLog } from "./events/event-log.js";
import { makeEvent } from "../core/events/event.js";
import { openNetwork } from "./network/open-network.js";
import { openRuntime } from "./containers/open-runtime.js";
import { DriverRegistry } from "./plugins/driver-registry.js";
import { logDriverSource } from "./plugins/log-drivers.js";
import { imageRoutes } from "./api/routes/images.js";
import { authRoutes } from "./api/routes/auth.js";
import { distributionRoutes } from "./api/routes/distribution.js";
import { RegistryService } from "./registry/registry.js";
import { systemDfRoute } from "./api/routes/system-df.js";
import { clusterRoutes } from "./api/routes/cluster.js";
import { openStorage } from "./storage/open-storage.js";
import type { Logger } from "pino";
import { createHooks, type EngineHooks, type ShutdownReason } from "../core/hooks.js";
import type { LoadedConfig } from "../core/options/load-config.js";
import type { DaemonConfig, OptionName } from "../core/options/table.js";
import { usePairFolder } from "../core/archive/socket-pair.js";
import { unpigzSpares } from "../core/archive/unpigz.js";
import { buildApi, type Api } from "./api/app.js";
import type { LoadLimits } from "./api/load-shedding.js";
import { AuthzChain } from "./authz-chain.js";
import { RemotePlugins } from "./remote-plugins/remote-plugins.js";
import { callEach } from "./call-each.js";
import { guardNotifications } from "./notification-guard.js";
import { ruleHost, type HostReport } from "./host-facts.js";
import { openListeners, type Listener } from "./listeners/listen.js";
import { formatAddress, parseHost, type ListenAddress } from "./listeners/parse-host.js";
import { takeActivationFds } from "./listeners/socket-activation.js";
import { loadTlsOptions } from "./listeners/tls-options.js";
import { claimPidfile } from "./pidfile.js";
import { defaultResolveOptions, type ResolveOptions } from "./plugins/resolve-plugin.js";
import { reloadDaemon, type ReloadOutcome } from "./reload.js";
import { prepareRoots, type Roots } from "./roots.js";
import { upgradeStateModes } from "./state-modes-upgrade.js";
import { checkRootless } from "./userns/rootless.js";
import { inRootlessKit, rootlessPaths } from "../core/options/rootless-defaults.js";
import { setupUsernsRemap, shareWithRemappedRoot } from "./userns/remap.js";
import { buildSystemInfo, buildVersionInfo, loadDaemonId, type InfoSources } from "./system-info.js";
import { hostname } from "node:os";
import { tapFeatures } from "./features.js";
import { supervisorAnswers } from "./supervisor/launch.js";

async function loadMetricsModules() {
  const [{ EngineMetrics }, { serveMetrics }] = await Promise.all([import("./metrics/engine-metrics.js"), import("./metrics/metrics-server.js")]);
  return { EngineMetrics, serveMetrics };
}

/** How long a metrics scrape waits for the supervisor's answer before calling it down. */
const SUPERVISOR_PING_MS = 2000;

export interface DaemonOptions {
  loaded: LoadedConfig;
  /** The flags as given: a reload merges the file with them again. */
  flags: ReadonlyMap<OptionName, readonly string[]>;
  host: HostReport;
  env: NodeJS.ProcessEnv;
  log: Logger;
  resolve?: ResolveOptions;
  load?: LoadLimits;
}

export interface RunningDaemon {
  hooks: EngineHooks;
  roots: Roots;
  listeners: Listener[];
  api: Api;
  config(): DaemonConfig;
  reload(): Promise<ReloadOutcome>;
  stop(reason: ShutdownReason): Promise<void>;
}

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { log, env, host } = opts;
  let config = opts.loaded.config;
  const activationFds = takeActivationFds(env);
  const tlsOn = config.tls || config.tlsverify;
  // Parse every address before anything is created, so that a typo changes nothing.
  const addresses = listenAddresses(config.host, tlsOn, env);
  // The advertise address names an interface or an address of this host: checked before too.
  const nodeAddr = resolveAdvertiseAddr(config["cluster-default-advertise-addr"]);
  const tls = tlsOn
    ? loadTlsOptions({ verify: config.tlsverify, cacert: config.tlscacert, cert: config.tlscert, key: config.tlskey })
    : undefined;
  const rootlessWarnings = checkRootless(config, env);
  for (const warning of rootlessWarnings) log.warn(warning);
  for (const warning of tls?.warnings ?? []) log.warn(warning);
  const remap = setupUsernsRemap(config["userns-remap"], log);
  const roots = prepareRoots(config["data-root"], config["exec-root"], config.tmpdir, remap);
  const tightened = upgradeStateModes(roots.dataRoot, remap?.root.gid);
  if (tightened?.changed) log.info(tightened, "made the state an older engined left readable private to root");
  const undo: (() => Promise<void> | void)[] = [claimPidfile(config.pidfile)];
  // (after the pid file: no other daemon uses this exec root, so what is in it was left by a kill)
  usePairFolder(join(roots.execRoot, "pairs"));
  const hooks = createHooks();
  // a notification tap that throws is logged, and what fired it goes on (host/notification-guard.ts)
  guardNotifications(hooks, log);
  // Tapped before the first plugin loads, so that it sees every one (see host/metrics/). Like
  // the CRI's below, its modules (prom-client; gRPC) load only when asked for: a daemon
  // without them starts some 200 modules lighter.
  const metricsModules = config["metrics-addr"] ? await loadMetricsModules() : undefined;
  const metrics = metricsModules ? new metricsModules.EngineMetrics(hooks) : undefined;
  let shutdownReason: ShutdownReason = "error";
  try {
    tapClusterInfo(hooks, () => config, nodeAddr);
    const loader = { log, host, dataRoot: roots.dataRoot, execRoot: roots.execRoot, resolve: opts.resolve ?? defaultResolveOptions() };
    const authz = new AuthzChain(hooks, loader);
    const registry = new RegistryService(() => ({
      insecureRegistries: config["insecure-registry"],
      mirrors: config["registry-mirror"],
      proxies: { http: config["http-proxy"], https: config["https-proxy"], noProxy: config["no-proxy"] },
    }));
    undo.push(() => registry.close());
    // Docker's managed plugins: read now, as the authorization chain may name one
    // (`--authorization-plugin name:tag`); enabled ones run once the runtime is open (below)
    const managedPlugins = await ManagedPlugins.open({
      dataRoot: roots.dataRoot, execRoot: roots.execRoot, config: () => config, host: ruleHost(host), runtime: () => runtime, hooks, registry, log: log.child({ component: "plugins" }),
    });
    undo.push(() => managedPlugins.shutdown(config["live-restore"]));
    authz.useManagedPlugins(managedPlugins);
    await authz.replace(config["authorization-plugin"]);
    // every driver of every kind is made and kept by one registry (host/plugins/driver-registry.ts)
    const drivers = new DriverRegistry({ ...loader, hooks }).host();
    const driver = await openStorage(config["storage-driver"], config["storage-opt"], drivers, remap?.idMap);
    const images = await ImageStore.open(join(roots.dataRoot, "image"), join(roots.tmpDir, "image"), driver);
    const containers = new ContainerStore(join(roots.dataRoot, "containers"), remap?.root.gid);
    // creates and removals a crash cut short: their writable layers go (container-store.ts)
    const swept = await containers.sweepUnfinished((id) => driver.remove(id));
    if (swept.length > 0) log.info({ containers: swept }, "removed the layers of containers a crash left half made or half removed");
    if (remap) shareWithRemappedRoot(remap, containers.root);
    const runtime = await openRuntime(drivers);
    // enabled managed plugins run again (one left running is taken up)
    await managedPlugins.restore();
    const logDrivers = logDriverSource(drivers, () => config["log-opt"]);
    // The default log driver and its --log-opt defaults are checked now: a typo stops the start.
    const defaultLogDriver = await logDrivers(config["log-driver"], "operator");
    try {
      defaultLogDriver.validateOptions(config["log-opt"]);
    } catch (err) {
      throw errors.configLogOpts((err as Error).message);
    }
    const links = new ContainerLinks({ containers, hooks, log: log.child({ component: "links" }), unlinked: (parent, child) => network.containers.unlink(parent, child) });
    // plugins of other processes, shared by the volume and network drivers they serve
    const remotePlugins = new RemotePlugins();
    remotePlugins.useManaged(managedPlugins);
    const network = await openNetwork(drivers, { containers, config: () => config, log: log.child({ component: "network" }), remotePlugins, remap, linkedHosts: (c) => links.hosts(c), linkPeers: (c) => links.peers(c) });
    const volumes = openVolumes(drivers, { containers, log: log.child({ component: "volumes" }), remotePlugins, rootOwner: remap?.root, images, storage: driver });
    // volumes a crash left without their record (volume-service.ts)
    const adopted = await volumes.service.adoptUnrecorded();
    if (adopted.length > 0) log.info({ volumes: adopted }, "recorded the local volumes a crash left without a record");
    openDevices({ hooks, config: () => config, log: log.child({ component: "devices" }) });
    tapCreateChecks({ hooks, containers, limits: host.limits, cpuset: host.cpuset, config: () => config });
    tapSharedNamespaces(hooks, containers);
    const eventLog = new EventLog(hooks);
    const runner = new ContainerRunner({
      containers, images, storage: driver, runtime, logDrivers, hooks, config: () => config, host: ruleHost(host),
      execRoot: roots.execRoot, log: log.child({ component: "containers" }), network: network.containers,
      volumes: volumes.containers, remap, links,
    });
    const execs = new ExecSessions({ runner, runtime, hooks, log: log.child({ component: "exec" }) });
    const service = new ContainerService({
      containers, images, storage: driver, runner, logDrivers, config: () => config, network: network.containers, hooks,
      volumes: volumes.containers, remap, log: log.child({ component: "containers" }), execs, links, cpuset: host.cpuset, limits: host.limits,
    });
    await service.restoreAtStart(config["live-restore"]);
    await volumes.containers.restore();
    undo.push(() => service.shutdown(config["live-restore"], config["shutdown-timeout"]));
    hooks.processInfo.tapPromise("images and containers", async (info) => {
      const all = containers.list();
      const count = (s: string) => all.filter((c) => c.State.Status === s).length;
      return {
        ...info,
        Containers: all.length,
        ContainersRunning: count("running"),
        ContainersPaused: count("paused"),
        ContainersStopped: all.length - count("running") - count("paused"),
        Images: images.count(),
        Driver: driver.name,
        DriverStatus: await driver.status(),
      };
    });
    tapFeatures({ hooks, config: () => config, platform: ruleHost(host).platform, log: log.child({ component: "features" }) });
    tapDaemonReload(hooks, authz, log);
    undo.push(() => callEach(hooks.shutdown, [shutdownReason], (tap, err) => log.error({ tap, err }, "shutdown step failed")));
    await hooks.start.promise();
    // Containers whose restart policy says so come back, once every plugin has started.
    await service.autoRestart();

    const warnings = [...insecureTcpWarnings(addresses, Boolean(tls), Boolean(tls?.verify)), ...rootlessWarnings];
    const buildCache = openBuildCache({
      images, containerUses: (id) => containers.usesImage(id), hooks, config: () => config.builder, dataRoot: roots.dataRoot, log: log.child({ component: "build-cache" }),
    });
    undo.push(() => buildCache.close());
    const builder = openBuilder({
      images, storage: driver, containers: service, registry, hooks, dataRoot: roots.dataRoot, execRoot: roots.execRoot, tmpDir: roots.tmpDir, idMap: remap?.idMap, ledger: buildCache.ledger,
      disablePigz: () => config["disable-pigz"],
      pullLimits: () => ({ downloads: config["max-concurrent-downloads"], attempts: config["max-download-attempts"], disablePigz: config["disable-pigz"] }),
    });
    const leftovers = await builder.service.recover();
    if (leftovers > 0) log.info({ layers: leftovers }, "removed the layers of builds a stopped daemon left");
    const daemonId = loadDaemonId(roots.dataRoot);
    hooks.reloaded.tap("events", () => hooks.event.call(makeEvent("daemon", "reload", daemonId, { name: hostname() })));
    const sources: InfoSources = {
      config: () => config,
      host,
      hooks,
      dataRoot: roots.dataRoot,
      daemonId,
      authorization: () => authz.ids(),
      driverNames: (kind) => drivers.drivers.names(kind),
      warnings: () => warnings,
      eventListeners: () => eventLog.listenerCount,
    };
    // CRI containers use images too (set once the CRI is served): `docker rmi` refuses those
    // even forced, as it does for a running container's (their layers are not Docker's to keep)
    let criImageUser = (_id: string): string | undefined => undefined;
    const usesImage = (id: string) => containers.usesImage(id) || criImageUser(id) !== undefined;
    images.setUsers((id) => {
      const users = containers.imageUsers(id);
      const cri = users.running ? undefined : criImageUser(id);
      return cri ? { ...users, running: cri } : users;
    });
    const api = await buildApi({
      hooks,
      log: log.child({ component: "api" }),
      load: opts.load,
      experimental: () => config.experimental,
      systemInfo: () => buildSystemInfo(sources),
      versionInfo: () => buildVersionInfo(sources),
      routes: [
        imageRoutes({
          store: images,
          driver,
          disablePigz: () => config["disable-pigz"],
          inUse: usesImage,
          containerCounts: () => {
            const counts = new Map<string, number>();
            for (const c of containers.list()) counts.set(c.Image, (counts.get(c.Image) ?? 0) + 1);
            return counts;
          },
          registry,
          hooks,
          limits: () => ({
            downloads: config["max-concurrent-downloads"],
            uploads: config["max-concurrent-uploads"],
            attempts: config["max-download-attempts"],
          }),
        }),
        authRoutes({ registry }),
        distributionRoutes({ registry }),
        containerRoutes({ containers, images, driver, service, cgroupVersion: host.cgroupVersion }),
        containerRunRoutes({ containers, service, logDrivers, config: () => config }),
        containerOpsRoutes({ containers, service }),
        checkpointRoutes({ containers, config: () => config }),
        execRoutes({ containers, execs }),
        eventRoutes(eventLog),
        commitRoutes({ containers, images, storage: driver, pauser: service, hooks }),
        buildRoutes(builder),
        buildPruneRoute(buildCache.pruner, hooks),
        containerFileRoutes({
          containers, runner, storage: driver, hooks, execRoot: roots.execRoot, disablePigz: () => config["disable-pigz"], idMap: remap?.idMap, volumes: volumes.containers,
          log: log.child({ component: "containers" }),
        }),
        networkRoutes({ networks: network.networks, endpoints: network.containers, containers }),
        volumeRoutes(volumes.service),
        pluginRoutes(managedPlugins),
        systemDfRoute({ images, containers, driver, volumes: () => volumesWithUsage(volumes.service), buildCache: () => buildCache.pruner.entries() }),
        clusterRoutes(),
      ],
    });
    undo.push(() => api.app.close());

    if (metrics && metricsModules) {
      metrics.watch({
        containerStatuses: () => containers.list().map((c) => c.State.Status),
        supervisorUp: () =>
          supervisorAnswers({ address: config.supervisor || undefined, execRoot: roots.execRoot, namespace: config["supervisor-namespace"] }, SUPERVISOR_PING_MS),
        authorizationPlugins: () => authz.ids(),
      });
      const served = await metricsModules.serveMetrics(config["metrics-addr"], metrics.registry, log.child({ component: "metrics" }));
      undo.push(() => served.close());
    }

    if (config["cri-supervisor"]) {
      const { openCri } = await import("./cri/open-cri.js");
      const cri = await openCri({
        config: () => config, host: ruleHost(host), dataRoot: roots.dataRoot, execRoot: roots.execRoot, log: log.child({ component: "cri" }), hooks,
        images, storage: driver, runtime, registry, dockerUsesImage: (id) => containers.usesImage(id),
        group: config.group, groupGiven: opts.loaded.given.has("group") || opts.loaded.fromFile.has("group"),
      });
      undo.push(() => cri.close());
      criImageUser = (id) => cri.imageUser(id);
    }

    const listeners = await openListeners(addresses, {
      handler: api.handler,
      tls,
      group: config.group,
      groupGiven: opts.loaded.given.has("group") || opts.loaded.fromFile.has("group"),
      activationFds,
      log,
    });
    undo.push(() => closeListeners(listeners, addresses));
    for (const l of listeners) log.info({ address: l.address }, `API listen on ${l.address}`);
    hooks.listening.call({ addresses: listeners.map((l) => l.address) });

    // unpigz processes kept ready for pulls, one for each download a pull runs at once and one
    // more, started once the daemon serves (core/archive/unpigz.ts says why); none when pigz
    // is turned off
    const unpigzWanted = (c: Readonly<DaemonConfig>) => (c["disable-pigz"] ? 0 : c["max-concurrent-downloads"] + 1);
    unpigzSpares.keep(unpigzWanted(config));
    hooks.reloaded.tap("unpigz-spares", (ctx) => unpigzSpares.keep(unpigzWanted(ctx.next)));
    undo.push(() => unpigzSpares.keep(0));

    let stopping: Promise<void> | undefined;
    let reloading = Promise.resolve<ReloadOutcome>("unchanged");
    return {
      hooks,
      roots,
      listeners,
      api,
      config: () => config,
      // Reloads run one after another: a second SIGHUP waits for the first.
      reload: () =>
        (reloading = reloading.then(() =>
          reloadDaemon({
            flags: opts.flags,
            env,
            host: ruleHost(host),
            hooks,
            log,
            current: () => config,
            commit: (next) => void (config = next),
          }),
        )),
      stop: (reason) => {
        shutdownReason = reason;
        return (stopping ??= stopAll(undo, reason, log));
      },
    };
  } catch (err) {
    await unwind(undo, log);
    throw err;
  }
}

/** The daemon's own parts that a reload changes: the log level and the authorization chain. */
function tapDaemonReload(hooks: EngineHooks, authz: AuthzChain, log: Logger): void {
  hooks.reload.tap("log-level", (ctx) => {
    if (!ctx.changed.has("debug")) return;
    const before = log.level;
    log.level = ctx.next.debug ? "debug" : ctx.next["log-level"];
    ctx.onRollback(() => void (log.level = before));
  });
  hooks.reload.tapPromise("authorization-plugins", async (ctx) => {
    if (!ctx.changed.has("authorization-plugin")) return;
    const { undo } = await authz.replace(ctx.next["authorization-plugin"]);
    ctx.onRollback(undo);
  });
}

/** `-H` values, or the default socket (inside RootlessKit, `$XDG_RUNTIME_DIR/engine.sock`); an empty `-H` counts as none. */
function listenAddresses(hosts: readonly string[], tls: boolean, env: NodeJS.ProcessEnv): ListenAddress[] {
  const given = hosts.filter((h) => h.trim() !== "");
  const fallback = inRootlessKit(env) ? `unix://${rootlessPaths.socket(env)}` : "";
  return (given.length ? given : [fallback]).map((h) => parseHost(h, tls));
}

/**
 * The warnings of Docker 28's `/info` for a TCP listener without TLS, or with TLS but without
 * client verification (daemon/info.go), the address as given.
 */
function insecureTcpWarnings(addresses: readonly ListenAddress[], tls: boolean, verified: boolean): string[] {
  if (verified) return [];
  const why =
    "\n         Access to the remote API is equivalent to root access on the host. Refer" +
    "\n         to the 'Docker daemon attack surface' section in the documentation for" +
    "\n         more information: https://docs.docker.com/go/attack-surface/";
  return addresses
    .filter((a) => a.proto === "tcp")
    .map((a) => {
      const at = formatAddress(a).replace(/^tcp:\/\//, "");
      return tls ? `WARNING: API is accessible on https://${at} without TLS client verification.${why}` : `WARNING: API is accessible on http://${at} without encryption.${why}`;
    });
}

async function closeListeners(listeners: readonly Listener[], addresses: readonly ListenAddress[]): Promise<void> {
  await Promise.allSettled(listeners.map((l) => l.close()));
  for (const a of addresses) if (a.proto === "unix") rmSync(a.path, { force: true });
}

async function stopAll(undo: (() => Promise<void> | void)[], reason: ShutdownReason, log: Logger): Promise<void> {
  log.info({ reason }, "daemon shutting down");
  await unwind(undo, log);
  log.info("daemon shut down");
}

/** Runs the undo steps, newest first; one that fails does not stop the others. */
async function unwind(undo: (() => Promise<void> | void)[], log: Logger): Promise<void> {
  for (const step of [...undo].reverse()) {
    try {
      await step();
    } catch (err) {
      log.error({ err }, "cleanup step failed");
    }
  }
}
