/**
 * A writable layer of the build's own, on an image's chain, mounted where the daemon alone can
 * reach it: COPY and ADD write their files into it (no container, no process), its diff becomes
 * the step's layer, and a `--from` source reads a stage's or an image's files through one. Each
 * is noted in `<data-root>/builder/pending/` from before it is made until it is gone, so that a
 * daemon killed half way removes it (and its mount) at its next start: nothing is left behind.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { Image } from "../../core/images/image-store.js";
import { PRIVATE_DIR, PRIVATE_FILE } from "../../core/state-modes.js";
import { diffToFile } from "../storage/diff-file.js";
import { mountSpecs, unmountAll } from "../storage/mount-specs.js";

export interface ScratchLayerDeps {
  storage: StorageDriver;
  /** `<data-root>/builder`. */
  home: string;
  /** Where the layers are mounted (under the exec root). */
  mountRoot: string;
}

export class ScratchLayer {
  private constructor(
    private readonly deps: ScratchLayerDeps,
    readonly id: string,
    /** The root file system, mounted. */
    readonly root: string,
  ) {}

  /** A writable layer on `image` (an empty one for scratch), mounted. */
  static async open(deps: ScratchLayerDeps, image: Image | undefined): Promise<ScratchLayer> {
    const id = randomBytes(32).toString("hex");
    const pending = join(deps.home, "pending");
    mkdirSync(pending, { recursive: true, mode: PRIVATE_DIR });
    writeFileSync(join(pending, id), "", { mode: PRIVATE_FILE });
    const layer = new ScratchLayer(deps, id, join(deps.mountRoot, id));
    try {
      await deps.storage.create(id, image?.chain.at(-1)?.slice("sha256:".length), { writable: true });
      await mountSpecs(await deps.storage.mounts(id), layer.root);
      return layer;
    } catch (err) {
      await layer.close();
      throw err;
    }
  }

  /** The layer's changes as a tar file in `dir` (unmounted first: overlay's upper directory is then still). */
  async diffTo(dir: string): Promise<string> {
    await unmountAll(this.root);
    return diffToFile(this.deps.storage, this.id, dir, "copy");
  }

  /** Unmounts and removes the layer; safe to repeat. */
  async close(): Promise<void> {
    await removeScratchLayer(this.deps, this.id);
  }
}

async function removeScratchLayer(deps: ScratchLayerDeps, id: string): Promise<void> {
  const root = join(deps.mountRoot, id);
  await unmountAll(root);
  try {
    rmdirSync(root); // only once unmounted and empty: never through a mount
  } catch {
    // not there
  }
  await deps.storage.remove(id);
  rmSync(join(deps.home, "pending", id), { force: true });
}

/** At daemon start: the layers a killed daemon left. */
export async function removeLeftoverLayers(deps: ScratchLayerDeps): Promise<number> {
  let ids: string[];
  try {
    ids = readdirSync(join(deps.home, "pending")).filter((n) => /^[a-f0-9]{64}$/.test(n));
  } catch {
    return 0;
  }
  for (const id of ids) await removeScratchLayer(deps, id);
  return ids.length;
}
