/**
 * A context tar unpacked into a folder of its own, as Docker's daemon does (FromArchive: its
 * decompression is told by the magic bytes, then the tar is untarred in a chroot).
 *
 * The work is core/archive's: `archiveInput` tells plain, gzip, bzip2, xz and zstd apart, and
 * `applyLayer` is the extraction that is a security boundary (nothing lands outside the folder:
 * a `..` that climbs out stops at it, absolute names and symlinked parents are resolved inside
 * it, as in Docker's chroot: `../foo` is `foo`, as moby's TestBuildUncleanTarFilenames sends). A context is no layer, so `.wh.` names are ordinary files, and device
 * nodes and fifos are left out (a build never needs one; Docker would make them). Owners, modes,
 * times and extended attributes are those of the tar.
 *
 * Failures are told apart for the client: a stream that does not decompress, one that is not a
 * tar, an entry that may not be made (each a 400 naming it), and the host's own failures (a
 * full disk: what they are, a 500).
 */
import { mkdir } from "node:fs/promises";
import { PassThrough, type Readable } from "node:stream";
import { applyLayer, archiveFault, LayerEntryError } from "../../../core/archive/index.js";
import { errors } from "../../../core/errors.js";
import { archiveInput } from "../../containers/files/archive-input.js";

export interface UnpackOptions {
  /**
   * The input is the client's request body: stopping early must not destroy it (that closes
   * the connection before the error can be answered); the rest is read and dropped instead.
   */
  borrowed?: boolean;
  signal?: AbortSignal;
  disablePigz: boolean;
}

/** Unpacks the context tar `input` (compressed or not) into `dir`, made here (0700). */
export async function unpackContext(input: Readable, dir: string, opts: UnpackOptions): Promise<void> {
  await mkdir(dir, { mode: 0o700 });
  const { signal } = opts;
  signal?.throwIfAborted();
  // A borrowed body is piped into a stream of ours, which alone the reading side may destroy;
  // on failure it is unpiped and the rest of it flows away (a stream that something still
  // listens to for reading would not flow).
  const guard = opts.borrowed ? new PassThrough() : undefined;
  if (guard) {
    input.on("error", (e) => guard.destroy(e));
    input.pipe(guard);
  }
  const source = guard ?? input;
  const onAbort = () => source.destroy(signal!.reason as Error);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await applyLayer(archiveInput(source, { disablePigz: opts.disablePigz }), dir, { whiteouts: "none", skipDevices: true, clampDotDot: true });
  } catch (e) {
    source.destroy(); // (the decompression behind it stops too)
    if (guard) {
      input.unpipe(guard);
      if (!input.destroyed) input.resume(); // the rest of the body, dropped
    }
    if (signal?.aborted) throw signal.reason;
    throw unpackError(e);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** A failed unpack as the client is told it (see the file's comment). */
function unpackError(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const fault = archiveFault(e);
  // why an entry was refused, in a context's words (core/archive speaks of layers)
  if (fault?.kind === "entry") return errors.contextInvalidEntry(fault.entry, fault.why.replaceAll("layer directory", "build context").replaceAll("the layer", "the build context"));
  if (fault?.kind === "compression") return errors.contextCorrupt(fault.message);
  if (fault?.kind === "format") return errors.contextNotArchive(fault.message);
  if (e instanceof LayerEntryError) return e.cause; // the host's own failure, met at an entry
  // other readers' errors of the data carry no code; a system call's failure has one and a syscall
  const code = (e as NodeJS.ErrnoException).code;
  if (code === undefined && (e as NodeJS.ErrnoException).syscall === undefined) return errors.contextNotArchive(e.message);
  return e;
}
