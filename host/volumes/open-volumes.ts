/**
 * Opens the volume side of the daemon: the records under `<data-root>/volumes/_meta`, the
 * drivers (`volume` plugins, made by the driver registry on first use, and plugins of other
 * processes found in the plugin folders), the volume service and containers' use of
 * volumes, whose processSpec tap puts binds, volumes, tmpfs and image mounts into each OCI spec.
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { ContainerStore } from "../../core/containers/container-store.js";
import type { PluginHost } from "../plugins/driver-registry.js";
import { ContainerVolumes } from "./container-volumes.js";
import { volumeDriverSource } from "./volume-drivers.js";
import { RemoteDrivers } from "../remote-plugins/remote-drivers.js";
import { RemoteVolumeDriver } from "./remote-volume-driver.js";
import type { RemotePlugins } from "../remote-plugins/remote-plugins.js";
import { VolumeService } from "./volume-service.js";
import { VolumeStore } from "./volume-store.js";
import type { Owner } from "../../core/userns/id-map.js";
import type { ImageStore } from "../../core/images/image-store.js";
import type { StorageDriver } from "../../core/contracts/storage.js";

export function openVolumes(
  loader: PluginHost,
  deps: { containers: ContainerStore; log: Logger; remotePlugins: RemotePlugins; rootOwner?: Owner; images?: ImageStore; storage?: StorageDriver },
): { service: VolumeService; containers: ContainerVolumes } {
  const store = new VolumeStore(join(loader.dataRoot, "volumes"));
  const remote = new RemoteDrivers(deps.remotePlugins, "volumedriver", RemoteVolumeDriver.open, deps.log);
  const service = new VolumeService({
    store, drivers: volumeDriverSource(loader, remote, deps.rootOwner), remoteDrivers: () => remote.all(), containers: deps.containers, hooks: loader.hooks,
    driverUse: (driver, delta) => deps.remotePlugins.use(driver, delta),
  });
  // the volumes recorded with a managed plugin are its users from the start, as Docker's restore counts them
  for (const v of store.list()) if (v.Driver !== "local") deps.remotePlugins.use(v.Driver, 1);
  const containers = new ContainerVolumes({
    volumes: service, containers: deps.containers, hooks: loader.hooks, log: deps.log, rootOwner: deps.rootOwner,
    subpathRoot: join(loader.execRoot, "volume-subpaths"),
    daemonRoot: loader.dataRoot,
    ...(deps.images && deps.storage ? { images: deps.images, storage: deps.storage, imageMountRoot: join(loader.execRoot, "image-mounts") } : {}),
  });
  loader.hooks.processSpec.tapPromise("volumes", (spec, ctx) => containers.spec(spec, ctx));
  // `/info` lists the volume drivers this daemon has: the built-in one, and those loaded since.
  loader.hooks.processInfo.tap("volumes", (info) => ({ ...info, Plugins: { ...info.Plugins, Volume: [...new Set(["local", ...service.driverNames()])] } }));
  return { service, containers };
}
