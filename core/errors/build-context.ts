/**
 * The error catalogue, a build's context (core/errors.ts assembles it): the body or `remote` of
 * `POST /build` (host/build/context). Messages are Docker's where Docker's daemon has one; the
 * statuses are 4xx for what the client sent or named, where Docker answers most of them with a
 * 500 (its errors of this stage are unclassified).
 */
import { define } from "./define.js";

export const buildContextErrors = {
  // --- the body: a tar, plain or compressed ---
  contextNotArchive: define(
    "ENGINE_ERR_CONTEXT_NOT_ARCHIVE",
    400,
    (detail: string) => `the build context is not a tar archive (plain, or compressed with gzip, bzip2, xz or zstd): ${detail}`,
  ),
  contextCorrupt: define("ENGINE_ERR_CONTEXT_CORRUPT", 400, (detail: string) => `the build context could not be decompressed: ${detail}`),
  contextInvalidEntry: define("ENGINE_ERR_CONTEXT_INVALID_ENTRY", 400, (entry: string, why: string) => `invalid build context: entry "${entry}": ${why}`),

  // --- the Dockerfile and .dockerignore in it ---
  contextDockerfileNotFound: define("ENGINE_ERR_CONTEXT_DOCKERFILE_NOT_FOUND", 400, (path: string) => `Cannot locate specified Dockerfile: ${path}`),
  contextOutside: define("ENGINE_ERR_CONTEXT_PATH_OUTSIDE", 400, (path: string) => `forbidden path outside the build context: ${path} ()`),
  contextDockerfileEmpty: define("ENGINE_ERR_CONTEXT_DOCKERFILE_EMPTY", 400, (path: string) => `the Dockerfile (${path}) cannot be empty`),
  contextFileUnreadable: define("ENGINE_ERR_CONTEXT_FILE_UNREADABLE", 400, (what: string, why: string) => `unexpected error reading ${what}: ${why}`),

  // --- `remote`: what it names ---
  contextRemoteUnrecognized: define(
    "ENGINE_ERR_CONTEXT_REMOTE_UNRECOGNIZED",
    400,
    (remote: string) => `remoteURL (${remote}) could not be recognized as URL`,
  ),
  contextRemoteSession: define(
    "ENGINE_ERR_CONTEXT_REMOTE_SESSION",
    400,
    () => "experimental session with v1 builder is no longer supported, use builder version v2 (BuildKit) instead",
  ),
  contextDownloadFailed: define("ENGINE_ERR_CONTEXT_DOWNLOAD_FAILED", 400, (url: string, cause: string) => `error downloading remote context ${url}: ${cause}`),
  contextDownloadNotFound: define("ENGINE_ERR_CONTEXT_DOWNLOAD_NOT_FOUND", 404, (url: string, cause: string) => `error downloading remote context ${url}: ${cause}`),
  contextDownloadUnauthorized: define(
    "ENGINE_ERR_CONTEXT_DOWNLOAD_UNAUTHORIZED",
    401,
    (url: string, cause: string) => `error downloading remote context ${url}: ${cause}`,
  ),
  contextDownloadForbidden: define("ENGINE_ERR_CONTEXT_DOWNLOAD_FORBIDDEN", 403, (url: string, cause: string) => `error downloading remote context ${url}: ${cause}`),
  contextContentType: define("ENGINE_ERR_CONTEXT_CONTENT_TYPE", 400, (url: string, why: string) => `error detecting content type for remote ${url}: ${why}`),
  contextGitFailed: define("ENGINE_ERR_CONTEXT_GIT_FAILED", 400, (what: string) => what),
  contextGitMissing: define(
    "ENGINE_ERR_CONTEXT_GIT_MISSING",
    500,
    (why: string) => `a git repository as the build context needs git, which cannot be run here: ${why}`,
  ),
} as const;
