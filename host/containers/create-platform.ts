/**
 * A create's `platform=` (API 1.41, `docker run --platform`): the image must be of that
 * platform, as Docker's daemon checks it (containerd's `platforms.Only`): the same OS and
 * architecture (an amd64 request takes a 386 image too), and a variant the requested one runs
 * (arm/v7 runs v6 and v5; no variant on either side is any). Otherwise the image is "not
 * found" for that platform (404), and a client may pull the right one.
 */
import { errors } from "../../core/errors.js";
import type { ImageConfig } from "../../core/images/image-config.js";
import { formatPlatform, parsePlatform, type Platform } from "../registry/manifests.js";

function normalVariant(p: Platform): string {
  const v = p.variant ?? "";
  return p.architecture === "arm64" && v === "v8" ? "" : v;
}

function runs(want: Platform, have: Platform): boolean {
  if (want.os !== have.os) return false;
  if (want.architecture !== have.architecture) return want.architecture === "amd64" && have.architecture === "386";
  const [w, h] = [normalVariant(want), normalVariant(have)];
  if (w === "" || h === "" || w === h) return true;
  // an arm image of an older variant runs on a newer one
  return want.architecture === "arm" && /^v\d$/.test(w) && /^v\d$/.test(h) && h < w;
}

/** Throws the daemon's 404 when the image `ref` (its configuration `config`) is not of `platform`. */
export function checkCreatePlatform(ref: string, config: ImageConfig, platform: string | undefined): void {
  if (!platform) return;
  const want = parsePlatform(platform);
  const have: Platform = { os: config.os ?? "linux", architecture: config.architecture ?? "", ...(config.variant ? { variant: config.variant } : {}) };
  if (!runs(want, have)) throw errors.imagePlatformMismatch(ref, formatPlatform(want), formatPlatform(have));
}
