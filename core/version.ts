/**
 * The engine's own version and the API versions it speaks. The API is the Docker Engine API:
 * clients pick a version in the path (`/v1.41/...`) or get the newest one without it.
 */
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

export const ENGINE_VERSION: string = pkg.version;
/** The newest API version served; also what an unversioned path means. */
export const API_VERSION = "1.51";
/** The oldest API version accepted. */
export const MIN_API_VERSION = "1.24";
/** Set at build time by scripts/build-info; "unknown" in a tree that was never built that way. */
export const GIT_COMMIT: string = process.env.ENGINE_GIT_COMMIT ?? readBuildInfo().commit;
export const BUILD_TIME: string = readBuildInfo().time;

function readBuildInfo(): { commit: string; time: string } {
  try {
    return JSON.parse(readFileSync(new URL("../build-info.json", import.meta.url), "utf8"));
  } catch {
    return { commit: "unknown", time: "" };
  }
}

/** Compares two "major.minor" versions numerically: 1.9 < 1.24. */
export function compareApiVersions(a: string, b: string): number {
  const [am, an] = a.split(".").map(Number);
  const [bm, bn] = b.split(".").map(Number);
  return am !== bm ? am - bm : an - bn;
}
