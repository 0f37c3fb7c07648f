/**
 * `platform=` of the image routes that take it as an OCI platform in JSON (`history` from API
 * 1.48, an image's inspect from 1.49; the Docker CLI sends `{"architecture":"arm64","os":"linux"}`),
 * read as Docker's daemon reads it: a JSON object whose `os` and `architecture` are both given.
 * The image must then be of that platform, as a create's `platform=` asks (create-platform.ts):
 * otherwise it is not found for that platform (404), Docker's image lookup's words.
 * An image's remove reads `platforms=` from API 1.50 the same way, each value one platform; the
 * graphdriver store Docker 28 keeps images in (one platform each) takes one at most.
 */
import { errors } from "../../core/errors.js";
import type { ImageConfig } from "../../core/images/image-config.js";
import { checkCreatePlatform } from "../containers/create-platform.js";

/** The platform a request names as `os/architecture[/variant]`, or undefined when none. */
export function decodePlatformParam(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  return decodeOnePlatform(raw);
}

function decodeOnePlatform(raw: string): string {
  let p: unknown;
  try {
    p = JSON.parse(raw);
  } catch (err) {
    throw errors.apiInvalidBody(`failed to parse platform: ${(err as Error).message}`);
  }
  if (!p || typeof p !== "object" || Array.isArray(p)) throw errors.apiInvalidBody(`failed to parse platform: ${raw} is not a JSON object`);
  const { os, architecture, variant, "os.version": osVersion, "os.features": osFeatures } = p as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const optional = text(variant) !== "" || text(osVersion) !== "" || (Array.isArray(osFeatures) && osFeatures.length > 0);
  if (text(os) === "" && text(architecture) === "" && optional) throw errors.apiInvalidBody("optional platform fields provided, but OS and Architecture are missing");
  if (text(os) === "" || text(architecture) === "") throw errors.apiInvalidBody("both OS and Architecture must be provided");
  return [text(os), text(architecture), text(variant)].filter(Boolean).join("/");
}

/** Throws the 404 when the image `name` (its configuration `config`) is not of the requested platform. */
export function checkImagePlatform(name: string, config: ImageConfig, raw: string | undefined): void {
  checkCreatePlatform(name, config, decodePlatformParam(raw));
}

/**
 * The `platforms=` of an image's remove (API 1.50), every value decoded (an empty one too, as
 * Docker's form decoder reads each): the one platform asked, or undefined when none.
 */
export function decodeRemovePlatforms(raws: readonly string[]): string | undefined {
  const platforms = raws.map(decodeOnePlatform);
  if (platforms.length > 1) throw errors.apiInvalidBody("multiple platforms are not supported");
  return platforms[0];
}
