/**
 * `image` mounts (`--mount type=image,source=<image>,target=<path>`, API 1.48): an image's root
 * filesystem, read-only, in a container. Docker's daemon makes a layer on the image for each
 * such mount; here the image's own layer chain is mounted as the storage driver gives it for
 * image layers (read-only), at `<exec-root>/image-mounts/<container>/<n>` while the container
 * runs, the n-th of its mounts: a path the record names at create (`Mounts[].Source`), out of
 * any container's reach. The image counts as the container's for a removal (`rmi` refuses it,
 * `rmi -f` of a stopped one keeps its layers: ContainerStore.imageUsers), so the chain is there
 * at every start. Unmounted when the container exits, and at the daemon's start for a container
 * that no longer runs.
 */
import { mkdir, readdir, rmdir } from "node:fs/promises";
import { posix } from "node:path";
import type { ContainerMount } from "../../core/containers/mount-point.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import { errors } from "../../core/errors.js";
import { mountSpecs, unmountAll } from "../storage/mount-specs.js";

/** Where a container's n-th mount, an image's, is mounted while it runs. */
export function imageMountPath(root: string, containerId: string, index: number): string {
  return posix.join(root, containerId, String(index));
}

/** Mounts the image of `m` at `m.Source` (an image without layers is an empty folder). */
export async function mountImage(storage: StorageDriver, m: ContainerMount): Promise<void> {
  // a mount an earlier run left (a crash before its exit was seen) goes first
  await unmountAll(m.Source);
  if (!m.Layer) {
    await mkdir(m.Source, { recursive: true, mode: 0o700 });
    return;
  }
  try {
    await mountSpecs(await storage.mounts(m.Layer), m.Source);
  } catch (err) {
    throw errors.mountFailed(m.Destination, `cannot mount the image ${m.Name ?? m.Image ?? ""}: ${(err as Error).message}`);
  }
}

/** Every image mount of the container unmounted and its folders removed; safe to repeat. */
export async function unmountImages(root: string, containerId: string): Promise<void> {
  const dir = posix.join(root, containerId);
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = posix.join(dir, name);
    await unmountAll(path);
    await rmdir(path).catch(() => {});
  }
  await rmdir(dir).catch(() => {});
}

/** The containers with image-mount folders under `root`. */
export async function containersWithImageMounts(root: string): Promise<string[]> {
  return readdir(root).catch(() => [] as string[]);
}
