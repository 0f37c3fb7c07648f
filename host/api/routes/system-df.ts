/**
 * `GET /system/df`: disk usage by images, containers, volumes and the build cache. Images are
 * those `GET /images/json` lists (a build's hidden intermediate images are build cache, as Docker
 * leaves them out); `LayersSize` counts the layers of every image once, and layers shared by
 * several listed images show in each one's `SharedSize`; an image's `Containers` counts the
 * containers made from it. Containers are listed as `GET /containers/json?all=1&size=1` lists
 * them, newest first, `SizeRw` left out when the writable layer is empty (as Docker's daemon).
 * `BuildCache` holds the build cache's entries (host/build/cache-entries.ts) in API 1.51's shape;
 * before API 1.42 with `Parent` for `Parents`, and their total as `BuilderSize`.
 */
import type { FastifyInstance } from "fastify";
import type { CacheEntry } from "../../../core/build/cache-rules.js";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import type { ImageStore } from "../../../core/images/image-store.js";
import { listItem } from "../../containers/container-view.js";
import { compareApiVersions } from "../../../core/version.js";
import { requestedApiVersion } from "../api-version.js";
import { sizesOf } from "./containers.js";
import { summary } from "./images.js";

export interface SystemDfDeps {
  images: ImageStore;
  containers: ContainerStore;
  driver: StorageDriver;
  /** The volumes with their `UsageData` (host/volumes/volume-service.ts). */
  volumes?: () => Promise<Record<string, unknown>[]>;
  /** The build cache's entries (host/build/cache-prune.ts). */
  buildCache?: () => CacheEntry[];
}

const time = (ms: number) => new Date(ms).toISOString();

/** An entry as API `version` shows it (Go's `time.Time` and `*time.Time`, `Parents` omitted when empty). */
function cacheRecord(e: CacheEntry, version: string): Record<string, unknown> {
  const before142 = compareApiVersions(version, "1.42") < 0;
  return {
    ID: e.id,
    ...(before142 ? { Parent: e.parents[0] ?? "" } : e.parents.length ? { Parents: e.parents } : {}),
    Type: e.type,
    Description: e.description,
    InUse: e.inUse,
    Shared: e.shared,
    Size: e.size,
    CreatedAt: time(e.createdAt),
    LastUsedAt: e.lastUsedAt === undefined ? null : time(e.lastUsedAt),
    UsageCount: e.usageCount,
  };
}

async function containerUsage(deps: SystemDfDeps): Promise<Record<string, unknown>[]> {
  const list = deps.containers.list().sort((a, b) => Date.parse(b.Created) - Date.parse(a.Created));
  return Promise.all(
    list.map(async (c) => {
      const { SizeRw, SizeRootFs } = await sizesOf(c, deps.driver, deps.images);
      return { ...listItem(c, [], (name) => deps.images.idNamed(name)), ...(SizeRw ? { SizeRw } : {}), SizeRootFs };
    }),
  );
}

export function systemDfRoute(deps: SystemDfDeps) {
  const store = deps.images;
  return (app: FastifyInstance) => {
    app.get("/system/df", async (request) => {
      const all = store.list();
      const parents = new Set(all.map((i) => i.parent));
      const images = all.filter((i) => i.references.length > 0 || !parents.has(i.id));
      const users = new Map<string, number>();
      for (const image of images) for (const chainId of image.chain) users.set(chainId, (users.get(chainId) ?? 0) + 1);
      const layerSize = (chainId: string) => store.layers.get(chainId)?.size ?? 0;
      const version = requestedApiVersion(request.raw);
      const cache = deps.buildCache?.() ?? [];
      const containers = await containerUsage(deps);
      const madeFrom = new Map<unknown, number>();
      for (const c of containers) madeFrom.set(c.ImageID, (madeFrom.get(c.ImageID) ?? 0) + 1);
      return {
        LayersSize: [...new Set(all.flatMap((i) => i.chain))].reduce((sum, c) => sum + layerSize(c), 0),
        Images: images.map((image) => ({
          ...summary(image, version, store),
          SharedSize: image.chain.filter((c) => (users.get(c) ?? 0) > 1).reduce((sum, c) => sum + layerSize(c), 0),
          Containers: madeFrom.get(image.id) ?? 0,
        })),
        Containers: containers,
        Volumes: deps.volumes ? await deps.volumes() : [],
        BuildCache: cache.sort((a, b) => b.createdAt - a.createdAt).map((e) => cacheRecord(e, version)),
        ...(compareApiVersions(version, "1.42") < 0 ? { BuilderSize: cache.reduce((n, e) => n + e.size, 0) } : {}),
      };
    });
  };
}
