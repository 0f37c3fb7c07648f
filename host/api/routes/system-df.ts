/**
 * `GET /system/df`: disk usage by images (and, once they exist, containers, volumes and the
 * build cache, which are empty lists until then). Layers shared by several images are counted
 * once in `LayersSize` and shown in each image's `SharedSize`.
 */
import type { FastifyInstance } from "fastify";
import type { ImageStore } from "../../../core/images/image-store.js";
import { requestedApiVersion } from "../api-version.js";
import { summary } from "./images.js";

/** `volumes`: the volumes with their `UsageData` (host/volumes/volume-service.ts). */
export function systemDfRoute(store: ImageStore, volumes?: () => Promise<Record<string, unknown>[]>) {
  return (app: FastifyInstance) => {
    app.get("/system/df", async (request) => {
      const images = store.list();
      const users = new Map<string, number>();
      for (const image of images) for (const chainId of image.chain) users.set(chainId, (users.get(chainId) ?? 0) + 1);
      const layerSize = (chainId: string) => store.layers.get(chainId)?.size ?? 0;
      const version = requestedApiVersion(request.raw);
      return {
        LayersSize: [...users.keys()].reduce((sum, c) => sum + layerSize(c), 0),
        Images: images.map((image) => ({
          ...summary(image, version, store),
          SharedSize: image.chain.filter((c) => (users.get(c) ?? 0) > 1).reduce((sum, c) => sum + layerSize(c), 0),
          Containers: 0,
        })),
        Containers: [],
        Volumes: volumes ? await volumes() : [],
        BuildCache: [],
      };
    });
  };
}
