/**
 * A container's working directory is made at its create, as Docker's daemon does (in the
 * writable layer, with the folders on the way, owned by the container's root): `docker diff` of
 * a container that never ran shows it, and a working directory that is a file in the image is
 * refused then, not at each start. Resolved inside the container's root (files/scoped-fs.ts):
 * a symlink in the image leads only to a path of the container's own.
 */
import { errors } from "../../core/errors.js";
import { ScopedPathError, ScopedRoot } from "./files/scoped-fs.js";

/** Makes `dir` (an absolute, cleaned path) under `rootfs`; 400 in Docker's words when something that is no folder is in the way. */
export function makeWorkingDir(rootfs: string, dir: string, owner?: { uid: number; gid: number }): void {
  const root = ScopedRoot.open(rootfs);
  try {
    const r = root.resolve(dir, { followLast: true, create: true, ...(owner ? { owner } : {}) });
    r.close();
    // a name left means the last part is there and is no folder
    if (r.name !== "") throw errors.containerWorkingDirInvalid(`Cannot mkdir: ${dir} is not a directory`);
  } catch (err) {
    if (!(err instanceof ScopedPathError)) throw err;
    throw errors.containerWorkingDirInvalid(err.code === "ENOTDIR" ? `mkdir ${err.path}: not a directory` : err.message);
  } finally {
    root.close();
  }
}
