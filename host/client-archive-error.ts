/** What a client is told when a tar it sent cannot be read (core/archive/archive-fault.ts says whose fault it is). */
import { archiveFault, type ArchiveFault } from "../core/archive/index.js";
import { EngineError } from "../core/errors.js";

/**
 * A failure to read a client's tar (an image archive, a layer in it, an imported layer, `docker
 * cp`'s input) in the words of `invalid` (a 400) when the bytes are at fault: not a tar
 * (Docker's `invalid tar header` and `unexpected EOF`), a compressed stream that is corrupt or
 * cut short, an entry that climbs out of its folder. Anything else (the disk, the connection)
 * stays what it was.
 */
export function clientArchiveError(err: unknown, invalid: (detail: string) => EngineError): unknown {
  if (err instanceof EngineError) return err;
  const fault = tarStreamFault(err) ?? archiveFault(err);
  if (!fault) return err;
  if (fault.kind === "entry") return invalid(`entry "${fault.entry}": ${fault.why}`);
  return invalid(fault.kind === "compression" ? `corrupt compressed stream: ${fault.message}` : fault.message);
}

/** A tar reader's errors that Docker words its own way (tar-stream's, read here, carry nothing else to tell them by). */
function tarStreamFault(err: unknown): ArchiveFault | undefined {
  const message = err instanceof Error ? err.message : String(err);
  // (a bad checksum or format, a size field that is no number, a long name or PAX header past its bound)
  if (/^Invalid (tar )?header|^Header exceeds max size/.test(message)) return { kind: "format", message: "invalid tar header" };
  if (/^Unexpected end of data/.test(message)) return { kind: "format", message: "unexpected EOF" };
  return undefined;
}
