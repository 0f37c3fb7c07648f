/**
 * `GET /system/df`: disk usage by images, containers and volumes (the build cache is an empty
 * list: engined builds nothing). Layers shared by several images are counted once in
 * `LayersSize` and shown in each image's `SharedSize`; an image's `Containers` counts the
 * containers made from it. Containers are listed as `GET /containers/json?all=1&size=1` lists
 * them, newest first, `SizeRw` left out when the writable layer is empty (as Docker's daemon).
 */
import type { FastifyInstance } from "fastify";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import type { ImageStore } from "../../../core/images/image-store.js";
import { listItem } from "../../containers/container-view.js";
import { requestedApiVersion } from "../api-version.js";
import { sizesOf } from "./containers.js";
import { summary } from "./images.js";

export interface SystemDfDeps {
  images: ImageStore;
  containers: ContainerStore;
  driver: StorageDriver;
  /** The volumes with their `UsageData` (host/volumes/volume-service.ts). */
  volumes?: () => Promise<Record<string, unknown>[]>;
}

async function containerUsage(deps: SystemDfDeps): Promise<Record<string, unknown>[]> {
  const list = deps.containers.list().sort((a, b) => Date.parse(b.Created) - Date.parse(a.Created));
  return Promise.all(
    list.map(async (c) => {
      const { SizeRw, SizeRootFs } = await sizesOf(c, deps.driver, deps.images);
      return { ...listItem(c), ...(SizeRw ? { SizeRw } : {}), SizeRootFs };
    }),
  );
}

export function systemDfRoute(deps: SystemDfDeps) {
  const store = deps.images;
  return (app: FastifyInstance) => {
    app.get("/system/df", async (request) => {
      const images = store.list();
      const users = new Map<string, number>();
      for (const image of images) for (const chainId of image.chain) users.set(chainId, (users.get(chainId) ?? 0) + 1);
      const layerSize = (chainId: string) => store.layers.get(chainId)?.size ?? 0;
      const version = requestedApiVersion(request.raw);
      const containers = await containerUsage(deps);
      const madeFrom = new Map<unknown, number>();
      for (const c of containers) madeFrom.set(c.ImageID, (madeFrom.get(c.ImageID) ?? 0) + 1);
      return {
        LayersSize: [...users.keys()].reduce((sum, c) => sum + layerSize(c), 0),
        Images: images.map((image) => ({
          ...summary(image, version, store),
          SharedSize: image.chain.filter((c) => (users.get(c) ?? 0) > 1).reduce((sum, c) => sum + layerSize(c), 0),
          Containers: madeFrom.get(image.id) ?? 0,
        })),
        Containers: containers,
        Volumes: deps.volumes ? await deps.volumes() : [],
        BuildCache: [],
      };
    });
  };
}
