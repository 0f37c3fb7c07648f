/**
 * Whether a failure to read a tar is the archive's own fault: bytes that are no tar or a tar
 * cut short (TarFormatError), a compressed stream that is corrupt (zlib's and zstd's codes, an
 * `unpigz`, `xz` or `bzip2` that rejects its input), or an entry that may not be made where it
 * says (LayerEntryError: one that climbs out of its folder). A route that reads a client's
 * archive answers these with a 400 in its own words; the host's own failures met on the way (a
 * full disk, even at an entry) are not the archive's and stay what they are.
 */
import { LayerEntryError } from "./safe-path.js";
import { TarFormatError } from "./tar-reader.js";

export type ArchiveFault =
  | { kind: "format" | "compression"; message: string }
  | { kind: "entry"; entry: string; why: string };

/** Errors of the host, not of the data, even when an entry met them. */
const HOST_FAILURES = new Set(["ENOSPC", "EDQUOT", "EIO", "EMFILE", "ENFILE", "ENOMEM", "EROFS"]);

export function archiveFault(err: unknown): ArchiveFault | undefined {
  if (err instanceof LayerEntryError) {
    const cause = (err.cause as NodeJS.ErrnoException | undefined)?.code;
    return cause && HOST_FAILURES.has(cause) ? undefined : { kind: "entry", entry: err.entry, why: err.why };
  }
  if (err instanceof TarFormatError) return { kind: "format", message: err.message };
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string" && (code === "ERR_DECOMPRESS_DATA" || code.startsWith("Z_") || code.startsWith("ZSTD_"))) {
    return { kind: "compression", message: (err as Error).message.trim() };
  }
  return undefined;
}
