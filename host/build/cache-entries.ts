/**
 * The classic builder's cache as BuildKit's records (core/build/cache-rules.ts): its entries are
 * the images build steps made (cache-ledger.ts) that nothing names, the hidden intermediate
 * images and the untagged results of builds alike. A named image is an image, not cache; its
 * ancestors are `shared` (removing them frees nothing: it holds their layers), as are those of
 * an image no build made and of an entry a container uses. An entry is `inUse` while a running
 * build or a container holds it. Its `size` is the layer its step added.
 */
import type { CacheEntry } from "../../core/build/cache-rules.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import type { BuildCacheLedger } from "./cache-ledger.js";

export interface CacheEntriesDeps {
  ledger: BuildCacheLedger;
  images: ImageStore;
  /** A container was made from the image. */
  containerUses: (imageId: string) => boolean;
}

const hex = (id: string) => id.slice("sha256:".length);

/** The bytes of the layer `image`'s step added: none when its top layer is its parent's (or its step added no layer). */
function ownLayerSize(image: Image, parent: Image | undefined, store: ImageStore): number {
  const top = image.chain.at(-1);
  if (!top) return 0;
  const added = parent ? parent.chain.at(-1) !== top : !image.config.history?.at(-1)?.empty_layer;
  return added ? (store.layers.get(top)?.size ?? 0) : 0;
}

export function cacheEntries(deps: CacheEntriesDeps): CacheEntry[] {
  const all = deps.images.list();
  const byId = new Map(all.map((i) => [i.id, i]));
  const records = deps.ledger.current((id) => byId.has(id));
  const entries = all.filter((i) => records.has(i.id) && i.references.length === 0);
  const isEntry = new Set(entries.map((i) => i.id));
  const inUse = (id: string) => deps.ledger.inUse(id) || deps.containerUses(id);
  // the ancestors of what stays whoever prunes: each walked once
  const shared = new Set<string>();
  const walked = new Set<string>();
  for (const anchor of all.filter((i) => !isEntry.has(i.id) || deps.containerUses(i.id))) {
    for (let p = anchor.parent; p && !walked.has(p); p = byId.get(p)?.parent) {
      walked.add(p);
      if (isEntry.has(p)) shared.add(p);
    }
  }
  return entries.map((image) => {
    const rec = records.get(image.id)!;
    const parent = image.parent ? byId.get(image.parent) : undefined;
    return {
      id: hex(image.id),
      parents: parent ? [hex(parent.id)] : [],
      type: rec.type,
      description: rec.description,
      inUse: inUse(image.id),
      shared: shared.has(image.id),
      size: ownLayerSize(image, parent, deps.images),
      createdAt: Date.parse(rec.created),
      ...(rec.lastUsed ? { lastUsedAt: Date.parse(rec.lastUsed) } : {}),
      usageCount: rec.usageCount,
      labels: (image.config.config?.Labels as Record<string, string> | null | undefined) ?? {},
    };
  });
}
