/**
 * `WORKDIR`'s folder, made in a layer of its own as Docker's builder makes it (its layer is empty
 * when the folder is there already): later steps and the containers of the image find it.
 */
import type { Image } from "../../core/images/image-store.js";
import { ScopedRoot } from "../containers/files/scoped-fs.js";
import { ScratchLayer, type ScratchLayerDeps } from "./scratch-layer.js";

export interface WorkdirDeps extends ScratchLayerDeps {
  tmpDir: string;
}

/** The layer tar (the caller removes it). */
export async function makeWorkdir(deps: WorkdirDeps, image: Image | undefined, dir: string): Promise<string> {
  const layer = await ScratchLayer.open(deps, image);
  try {
    const root = ScopedRoot.open(layer.root);
    try {
      root.resolve(dir, { followLast: true, create: true }).close();
    } finally {
      root.close();
    }
    return await layer.diffTo(deps.tmpDir);
  } finally {
    await layer.close();
  }
}
