/** The error catalogue, the build cache's prune (`POST /build/prune`, `builder.gc`; core/errors.ts assembles it). */
import { define } from "./define.js";

export const buildCacheErrors = {
  /** A filter of the prune that Docker refuses, in Docker's words. */
  buildCacheFilter: define("ENGINE_ERR_BUILD_CACHE_FILTER", 400, (why: string) => why),
  buildCacheSpace: define("ENGINE_ERR_BUILD_CACHE_SPACE", 400, (name: string, value: string) => `${name} is in bytes and expects an integer, got ${value}`),
} as const;
