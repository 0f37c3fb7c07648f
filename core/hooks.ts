/**
 * The map of the system: every extension point of the engine, in one frozen object.
 *
 * Plugins receive these hooks in `apply(hooks, ctx)` and tap them; the daemon calls them.
 * Hook classes say the intent:
 * - SyncHook: a notification; return values are ignored. Its taps must not throw: the daemon
 *   logs what one throws and goes on with the others and the operation that fired it
 *   (host/notification-guard.ts).
 * - AsyncSeriesHook: ordered side effects; a throw stops the chain and the caller.
 * - AsyncSeriesBailHook: the first tap that returns something other than `undefined` decides,
 *   and later taps are not called (an authorization denial, a driver factory).
 * - AsyncSeriesWaterfallHook: a value passes through every tap, each returning it changed.
 *
 * Taps run in the order plugins were applied: requirements first, then the operator's order.
 * The host's own subsystems (volumes, network, devices, metrics...) tap the same hooks under
 * their names. Driver factories (storage, log, runtime, network, volume) are `HookMap`s keyed
 * by driver name, each with its contract in `core/contracts/`.
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, HookMap, SyncHook } from "tapable";
import type { AuthzDenial, AuthzRequest, AuthzResponse } from "./contracts/authz.js";
import type { EngineEvent } from "./events/event.js";
import type { ReloadContext } from "./reload.js";
import type { StorageContext, StorageDriver } from "./contracts/storage.js";
import type { LogDriver, LogDriverContext } from "./contracts/log.js";
import type { NetworkContext, NetworkDriver } from "./contracts/network.js";
import type { VolumeDriver, VolumeDriverContext } from "./contracts/volume.js";
import type { OciSpec, RuntimeContext, RuntimeDriver, SpecContext } from "./contracts/runtime.js";
import type { SystemInfo, VersionInfo } from "./system-info.js";
import type { ContainerCreateRequest, HostConfig } from "./containers/container-config.js";

/** What `checkContainerCreate` passes along: the request (its HostConfig always there) and the warnings so far. */
export interface ContainerCreateCheck {
  request: ContainerCreateRequest & { HostConfig: HostConfig };
  warnings: string[];
}

/** Why the daemon is stopping. */
export type ShutdownReason = "signal" | "error" | "api";

/** An API request, once answered (or once its connection closed, for a stream the client took over). */
export interface AnsweredRequest {
  method: string;
  /** The route's pattern (`/containers/:id/start`), never the raw URL; `unmatched` when no route took it. */
  route: string;
  statusCode: number;
  seconds: number;
}

/** A container start that failed, as its client was told. */
export interface FailedContainerStart {
  containerId: string;
  message: string;
}

/** A plugin the loader applied. */
export interface AppliedPluginInfo {
  id: string;
  kind: string;
  /** Where it came from: `built-in`, `package <name>`, `path`, or an out-of-process plugin's source. */
  source: string;
}

/** Where the daemon listens, once it does. */
export interface ListeningInfo {
  /** The addresses as `-H` would name them: `unix:///run/x.sock`, `tcp://127.0.0.1:2376`. */
  addresses: string[];
}

export function createHooks() {
  return Object.freeze({
    // --- daemon life -------------------------------------------------------------------------

    /**
     * Fires once, after every plugin is applied and the data and exec roots exist, before any
     * listener opens. Plugins start what they need lazily here (open stores, check binaries).
     * A throw stops the daemon before it serves anything; the message is logged as fatal.
     */
    start: new AsyncSeriesHook<[]>([]),

    /** Notification: every listener is open and the API is served. */
    listening: new SyncHook<[ListeningInfo]>(["listening"]),

    /**
     * Fires once when the daemon stops (signal, fatal error). Taps release what they hold
     * (processes, mounts, sockets) and must tolerate a `start` that never ran to its end.
     * Taps run in order; one that throws is logged and the others still run.
     */
    shutdown: new AsyncSeriesHook<[ShutdownReason]>(["reason"]),

    /**
     * A reload (SIGHUP) found reloadable options changed (`ctx.changed`). Each tap applies the
     * change of its area from `ctx.previous` to `ctx.next` and registers its undo with
     * `ctx.onRollback`; a tap that throws makes the whole reload roll back (see core/reload.ts).
     */
    reload: new AsyncSeriesHook<[ReloadContext]>(["reload"]),

    /** Notification: a reload took effect; `ctx.next` is now the configuration. */
    reloaded: new SyncHook<[ReloadContext]>(["reload"]),

    /**
     * Notification: something happened to a container, image, network or the daemon
     * (`core/events/event.ts`). `GET /events` streams these; taps must not throw or block.
     * A container's come from its ContainerService (host/containers/container-service.ts says
     * which, in what order), whoever asked: an API route, the image builder, a health check.
     */
    event: new SyncHook<[EngineEvent]>(["event"]),

    /**
     * Notification: a container start failed (the runtime refused it, the command was not
     * found, its network could not be set up). Docker sends no event for this; taps count or
     * log it and must not throw.
     */
    failedContainerStart: new SyncHook<[FailedContainerStart]>(["failure"]),

    /** Notification: bytes of an image pull arrived from a registry (a retried range counts again). */
    receivedImageBytes: new SyncHook<[number]>(["bytes"]),

    /** Notification: the plugin loader applied a plugin (at start, on first use, on a reload). */
    appliedPlugin: new SyncHook<[AppliedPluginInfo]>(["plugin"]),

    // --- drivers ---------------------------------------------------------------------------------
    // Every factory below is called by one driver registry (host/plugins/driver-registry.ts),
    // which loads the plugin of a kind and name, calls its factory once and keeps the driver
    // (a log, network or volume driver with its manifest's option declarations applied).

    /**
     * Storage drivers by name (`hooks.createStorageDriver.for("overlay2")`). The daemon calls the
     * hook of the selected driver once, at start, with the driver's home and options; the first
     * tap that returns a driver wins (see core/contracts/storage.ts). The options are read by
     * the plugin's manifest before (an undeclared key or a bad value stops the daemon first); a
     * throw (an option the driver cannot honour) stops the daemon with its message.
     */
    createStorageDriver: new HookMap(() => new AsyncSeriesBailHook<[StorageContext], StorageDriver | undefined>(["ctx"])),

    /**
     * Log drivers by name (`hooks.createLogDriver.for("json-file")`). The daemon calls the hook
     * of a driver name once (at start for `--log-driver`, later for another name a container
     * selects) and keeps the driver; the first tap that returns one wins (see
     * core/contracts/log.ts). The driver validates `--log-opt` defaults and each container's
     * options, and makes one logger per container.
     */
    createLogDriver: new HookMap(() => new AsyncSeriesBailHook<[LogDriverContext], LogDriver | undefined>(["ctx"])),

    /**
     * Runtime drivers by name (`hooks.createRuntime.for("ocirun")`): the maker of OCI bundles.
     * The daemon calls it once, at start; the first tap that returns a driver wins (see
     * core/contracts/runtime.ts).
     */
    createRuntime: new HookMap(() => new AsyncSeriesBailHook<[RuntimeContext], RuntimeDriver | undefined>(["ctx"])),

    /**
     * Network drivers by name (`hooks.createNetworkDriver.for("bridge")`). The daemon calls the
     * hook of each driver a network uses once, at start (the default network's first); the
     * first tap that returns a driver wins (see core/contracts/network.ts).
     */
    createNetworkDriver: new HookMap(() => new AsyncSeriesBailHook<[NetworkContext], NetworkDriver | undefined>(["ctx"])),

    /**
     * Volume drivers by name (`hooks.createVolumeDriver.for("local")`). The daemon calls the hook
     * of a driver name once, on first use (a volume create, a container that names the driver,
     * a recorded volume of that driver), and keeps the driver; the first tap that returns one
     * wins (see core/contracts/volume.ts).
     */
    createVolumeDriver: new HookMap(() => new AsyncSeriesBailHook<[VolumeDriverContext], VolumeDriver | undefined>(["ctx"])),

    /**
     * A container's OCI runtime spec (config.json) on its way into the bundle. The runtime
     * driver's `writeBundle` makes the start value (runtime.ocirun's baseSpec, whose root is the
     * root filesystem the host already mounted from the storage driver's `mounts`), passes it
     * through this waterfall and writes what comes out. The taps: volumes (host/volumes/) add the
     * container's binds, volumes and tmpfs mounts; shared namespaces
     * (host/containers/shared-namespaces.ts) join another container's or the host's namespaces
     * and IPC; network (host/network/) sets the network namespace path (or removes it for host),
     * under `--userns-remap` the path of the user namespace that owns it, and binds /etc/hosts,
     * /etc/resolv.conf and /etc/hostname; devices (host/devices/) add the nodes, mounts,
     * environment and hooks of the CDI devices the container asks for. Storage and log drivers
     * do not tap it. Each tap returns the spec; a throw fails the start with its message.
     */
    processSpec: new AsyncSeriesWaterfallHook<[OciSpec, SpecContext]>(["spec", "ctx"]),

    /**
     * A container create, once its body is valid and before anything is made: each tap checks
     * what it owns in `check.request` (a 400 for what Docker refuses at create), may change
     * its HostConfig as Docker records it (a default filled, a setting the kernel cannot
     * apply dropped), and adds the create's `Warnings`. Returns the check.
     */
    checkContainerCreate: new AsyncSeriesWaterfallHook<[ContainerCreateCheck]>(["check"]),

    // --- API -----------------------------------------------------------------------------------

    /**
     * Every API request, after its body is read and before its handler. Return a denial to
     * refuse it with 403 (`authorization denied by plugin <plugin>: <message>`), or `undefined`
     * to let it through. The first denial wins; no tap means allow.
     */
    authorizeRequest: new AsyncSeriesBailHook<[AuthzRequest], AuthzDenial | undefined>(["request"]),

    /**
     * Every API answer before it is sent, with its status, headers and (JSON, small) body.
     * A denial replaces the answer with 403 and the denial's message.
     */
    authorizeResponse: new AsyncSeriesBailHook<[AuthzResponse], AuthzDenial | undefined>(["response"]),

    /**
     * Notification: an API request was answered, with its route pattern, status and duration.
     * A stream the client took over (attach, exec) is reported when its connection closes.
     * Nothing is measured while no tap listens.
     */
    answeredRequest: new SyncHook<[AnsweredRequest]>(["request"]),

    /**
     * `GET /info`: the daemon's own fields pass through every tap; each subsystem fills what it
     * owns and returns the object: the daemon the container and image counts and the storage
     * driver's Driver and DriverStatus (host/daemon.ts), volumes the volume plugins, devices
     * the CDI devices, features and cluster their fields.
     */
    processInfo: new AsyncSeriesWaterfallHook<[SystemInfo]>(["info"]),

    /**
     * `GET /version`: the daemon's answer (host/system-info.ts) passes through every tap, which
     * may add a component to `Components`. No built-in plugin taps it.
     */
    processVersion: new AsyncSeriesWaterfallHook<[VersionInfo]>(["version"]),
  });
}

export type EngineHooks = ReturnType<typeof createHooks>;
