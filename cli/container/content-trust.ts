/**
 * `--disable-content-trust=false` (run, create, build) asks for image signatures to be verified
 * (Docker Content Trust, through a Notary server): this client verifies none, so it refuses
 * rather than use unverified an image that was asked to be verified. The default, true, is
 * what it does.
 */
import { ExitError } from "../command.js";

export const CONTENT_TRUST_UNSUPPORTED = "content trust (image signature verification) is not supported by this client: --disable-content-trust=false cannot be honoured";

export function refuseContentTrust(flags: Readonly<Record<string, unknown>>): void {
  if (flags["disable-content-trust"] === false) throw new ExitError(1, CONTENT_TRUST_UNSUPPORTED);
}
