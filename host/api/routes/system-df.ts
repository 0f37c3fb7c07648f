/**
 * `GET /system/df`: disk usage by images, containers, volumes and the build cache. Images are
 * those `GET /images/json` lists (a build's hidden intermediate images are build cache, as Docker
 * leaves them out); `LayersSize` counts the layers of every image once, and layers shared by
 * several listed images show in each one's `SharedSize`; an image's `Containers` counts the
 * containers made from it. Containers are listed as `GET /containers/json?all=1&size=1` lists
 * them, newest first, `SizeRw` left out when the writable layer is empty (as Docker's daemon).
 * `BuildCache` holds the build cache's entries (host/build/cache-entries.ts) in API 1.51's shape;
 * before API 1.42 with `Parent` for `Parents`, and their total as `BuilderSize`.
 *
 * From API 1.42, `type` (repeatable: `container`, `image`, `volume`, `build-cache`) asks for some
 * sections only; the others are `null`, as Docker's route leaves them (and `LayersSize` 0
 * without the images). Before 1.42 every section is there, whatever `type` says.
 */
import type { FastifyInstance } from "fastify";
import type { CacheEntry } from "../../../core/build/cache-rules.js";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import type { ImageStore } from "../../../core/images/image-store.js";
import { listItem } from "../../containers/container-view.js";
import { compareApiVersions } from "../../../core/version.js";
import { errors } from "../../../core/errors.js";
import { requestedApiVersion } from "../api-version.js";
import { queryList, type Query } from "../query.js";
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

const SECTIONS = ["container", "image", "volume", "build-cache"] as const;
type Section = (typeof SECTIONS)[number];

/** The sections asked for: all of them before API 1.42 or without `type`. */
function sectionsAsked(query: Query, version: string): Set<Section> {
  const types = queryList(query, "type");
  if (compareApiVersions(version, "1.42") < 0 || types.length === 0) return new Set(SECTIONS);
  for (const t of types) if (!(SECTIONS as readonly string[]).includes(t)) throw errors.systemDfUnknownType(t);
  return new Set(types as Section[]);
}

export function systemDfRoute(deps: SystemDfDeps) {
  const store = deps.images;
  return (app: FastifyInstance) => {
    app.get("/system/df", async (request) => {
      const version = requestedApiVersion(request.raw);
      const asked = sectionsAsked(request.query as Query, version);
      const all = store.list();
      const parents = new Set(all.map((i) => i.parent));
      const images = all.filter((i) => i.references.length > 0 || !parents.has(i.id));
      const users = new Map<string, number>();
      for (const image of images) for (const chainId of image.chain) users.set(chainId, (users.get(chainId) ?? 0) + 1);
      const layerSize = (chainId: string) => store.layers.get(chainId)?.size ?? 0;
      const cache = deps.buildCache?.() ?? [];
      // an image's `Containers` counts the containers made from it: read for the images too
      const containers = asked.has("container") || asked.has("image") ? await containerUsage(deps) : [];
      const madeFrom = new Map<unknown, number>();
      for (const c of containers) madeFrom.set(c.ImageID, (madeFrom.get(c.ImageID) ?? 0) + 1);
      return {
        LayersSize: asked.has("image") ? [...new Set(all.flatMap((i) => i.chain))].reduce((sum, c) => sum + layerSize(c), 0) : 0,
        Images: asked.has("image")
          ? images.map((image) => ({
              ...summary(image, version, store),
              SharedSize: image.chain.filter((c) => (users.get(c) ?? 0) > 1).reduce((sum, c) => sum + layerSize(c), 0),
              Containers: madeFrom.get(image.id) ?? 0,
            }))
          : null,
        Containers: asked.has("container") ? containers : null,
        Volumes: asked.has("volume") ? (deps.volumes ? await deps.volumes() : []) : null,
        BuildCache: asked.has("build-cache") ? cache.sort((a, b) => b.createdAt - a.createdAt).map((e) => cacheRecord(e, version)) : null,
        ...(compareApiVersions(version, "1.42") < 0 ? { BuilderSize: cache.reduce((n, e) => n + e.size, 0) } : {}),
      };
    });
  };
}
