/**
 * The modes of the daemon's own state under the data root, as Docker keeps its own: nobody but
 * root reads an image's blobs, layer tars or records, or lists the containers' folders. Each
 * file and folder is created with its mode (a `mode` on mkdir and open, never a chmod after:
 * a file is never readable for a moment), under the umask the daemon sets at its start (0022,
 * host/daemon.ts), so that what the caller's umask was changes nothing.
 *
 * What containers must read keeps the modes Docker gives it: a layer's files (from its tar),
 * the `hosts`, `hostname` and `resolv.conf` bound into a container (0644), a volume's `_data`.
 */

/** A folder of state (image/ and all below it, tmp/, network/, volumes/): root's alone. */
export const PRIVATE_DIR = 0o700;

/** A file of state (blobs, layer tars and layouts, records). */
export const PRIVATE_FILE = 0o600;

/**
 * A folder root passes through and, under `--userns-remap`, the remapped root too (the folder
 * is then given its group): the data root, `containers/` and each `containers/<id>/` (whose
 * network files a container's runtime binds from inside its user namespace). Nobody lists it.
 */
export const PASS_DIR = 0o710;
