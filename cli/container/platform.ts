/**
 * `--platform` as the Docker CLI reads it (containerd's platforms.Parse, core/images/platform-specifier.ts),
 * then Format for the `platform=` query of the create. Errors are containerd's words.
 */
import { formatParsedPlatform, parsePlatformSpecifier } from "../../core/images/platform-specifier.js";

/** The `platform=` value of the create for `--platform`; throws the Docker CLI's message. */
export function platformQuery(specifier: string): string {
  try {
    return formatParsedPlatform(parsePlatformSpecifier(specifier));
  } catch (e) {
    throw new Error(`error parsing specified platform: ${(e as Error).message}`);
  }
}
