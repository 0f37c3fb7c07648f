/**
 * `platform=` of the image routes that take it as an OCI platform in JSON (`history` from API
 * 1.48, an image's inspect from 1.49; the Docker CLI sends `{"architecture":"arm64","os":"linux"}`),
 * read as Docker's daemon reads it: a JSON object whose `os` and `architecture` are both given.
 * The image must then be of that platform, as a create's `platform=` asks (create-platform.ts):
 * otherwise it is not found for that platform (404), Docker's image lookup's words.
 */
import { errors } from "../../core/errors.js";
import type { ImageConfig } from "../../core/images/image-config.js";
import { checkCreatePlatform } from "../containers/create-platform.js";

/** The platform a request names as `os/architecture[/variant]`, or undefined when none. */
export function decodePlatformParam(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  let p: unknown;
  try {
    p = JSON.parse(raw);
  } catch (err) {
    throw errors.apiInvalidBody(`failed to parse platform: ${(err as Error).message}`);
  }
  if (!p || typeof p !== "object" || Array.isArray(p)) throw errors.apiInvalidBody(`failed to parse platform: ${raw} is not a JSON object`);
  const { os, architecture, variant } = p as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  if (text(os) === "" || text(architecture) === "") throw errors.apiInvalidBody("both OS and Architecture must be provided");
  return [text(os), text(architecture), text(variant)].filter(Boolean).join("/");
}

/** Throws the 404 when the image `name` (its configuration `config`) is not of the requested platform. */
export function checkImagePlatform(name: string, config: ImageConfig, raw: string | undefined): void {
  checkCreatePlatform(name, config, decodePlatformParam(raw));
}
