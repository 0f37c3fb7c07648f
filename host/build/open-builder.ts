/**
 * The image builder of the daemon: its service (build-service.ts) and the intake of contexts
 * (build-input.ts), on the daemon's image store, storage driver, container service and
 * registries. Its folders: `<data-root>/builder` (what a killed build left, to remove at start),
 * `<tmp>/build` (contexts and layer tars) and `<exec-root>/build` (its layers' mounts).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { ImageStore } from "../../core/images/image-store.js";
import { parseReference } from "../../core/images/reference.js";
import { PRIVATE_DIR } from "../../core/state-modes.js";
import type { IdMap } from "../../core/userns/id-map.js";
import type { ContainerService } from "../containers/container-service.js";
import { imageTransferEvent } from "../images/image-events.js";
import type { PullLimits } from "../images/pull.js";
import type { RegistryService } from "../registry/registry.js";
import { hostPlatform } from "../registry/manifests.js";
import { BuildInputs } from "./build-input.js";
import { BuildService } from "./build-service.js";
import type { BuildCacheLedger } from "./cache-ledger.js";

export interface BuilderDeps {
  images: ImageStore;
  storage: StorageDriver;
  containers: ContainerService;
  registry: RegistryService;
  hooks: EngineHooks;
  pullLimits: () => PullLimits;
  /** gzip contexts through zlib even with unpigz installed (`--disable-pigz`). */
  disablePigz: () => boolean;
  dataRoot: string;
  execRoot: string;
  tmpDir: string;
  idMap?: IdMap;
  /** The build cache's record (open-build-cache.ts). */
  ledger?: BuildCacheLedger;
}

export function openBuilder(deps: BuilderDeps): { service: BuildService; inputs: BuildInputs } {
  const tmpDir = join(deps.tmpDir, "build");
  // what a killed daemon's builds left there (their contexts, their layer tars) goes: nothing
  // is mounted in it (the build's layers are mounted under the exec root)
  rmSync(tmpDir, { recursive: true, force: true });
  mkdirSync(tmpDir, { recursive: true, mode: PRIVATE_DIR });
  const service = new BuildService({
    images: deps.images,
    storage: deps.storage,
    containers: deps.containers,
    hooks: deps.hooks,
    tmpDir,
    home: join(deps.dataRoot, "builder"),
    mountRoot: join(deps.execRoot, "build"),
    idMap: deps.idMap,
    ledger: deps.ledger,
    pull: async (reference, opts, emit, signal) => {
      const { pullImage } = await import("../images/pull.js");
      const ref = parseReference(reference);
      await pullImage(
        { store: deps.images, registry: deps.registry, limits: deps.pullLimits, received: (bytes) => deps.hooks.receivedImageBytes.call(bytes) },
        { reference: ref, allTags: false, credentials: opts.credentials(ref.domain), platform: opts.platform ?? hostPlatform(), signal, emit, drained: async () => {} },
      );
      deps.hooks.event.call(imageTransferEvent(deps.images, "pull", reference));
    },
  });
  return { service, inputs: new BuildInputs({ workRoot: tmpDir, disablePigz: deps.disablePigz }) };
}
