/** The error catalogue, images and registries (core/errors.ts assembles it). */
import { define } from "./define.js";

export const imagesErrors = {
  // --- images ---
  // Docker's words (distribution/reference): most refusals are the bare "invalid reference format"
  imageInvalidReference: define("ENGINE_ERR_IMAGE_INVALID_REFERENCE", 400, (message?: string) => message ?? "invalid reference format"),
  imageInvalidTag: define("ENGINE_ERR_IMAGE_INVALID_TAG", 400, () => "invalid tag format"),
  imageNotFound: define("ENGINE_ERR_IMAGE_NOT_FOUND", 404, (ref: string) => `No such image: ${ref}`),
  // a save of a tag the repository does not have (Docker's reference store's words)
  imageTagNotFound: define("ENGINE_ERR_IMAGE_TAG_NOT_FOUND", 404, () => "reference does not exist"),
  imagePlatformMismatch: define(
    "ENGINE_ERR_IMAGE_PLATFORM_MISMATCH",
    404,
    (ref: string, wanted: string, actual: string) => `image with reference ${ref} was found but does not match the specified platform: wanted ${wanted}, actual: ${actual}`,
  ),
  // a `platform=` that is none: containerd's platforms.Parse's words, as Docker's daemon passes them on
  platformInvalid: define("ENGINE_ERR_PLATFORM_INVALID", 400, (message: string) => message),
  // an import for another operating system (Docker's image.CheckOS)
  imageOsNotSupported: define("ENGINE_ERR_IMAGE_OS_NOT_SUPPORTED", 400, () => "operating system is not supported"),
  imageAmbiguous: define(
    "ENGINE_ERR_IMAGE_AMBIGUOUS",
    400,
    (prefix: string) => `multiple IDs found with provided prefix: ${prefix}`,
  ),
  imageConflict: define("ENGINE_ERR_IMAGE_CONFLICT", 409, (detail: string) => `conflict: ${detail}`),
  imageInvalidArchive: define("ENGINE_ERR_IMAGE_INVALID_ARCHIVE", 400, (detail: string) => `invalid image archive: ${detail}`),
  imageInvalidLayerArchive: define("ENGINE_ERR_IMAGE_INVALID_LAYER_ARCHIVE", 400, (detail: string) => `invalid layer archive: ${detail}`),
  // what Docker's daemon says of a download it could not make (Go's http client): a 500
  imageImportDownloadFailed: define("ENGINE_ERR_IMAGE_IMPORT_DOWNLOAD_FAILED", 500, (url: string, cause: string) => `Get "${url}": ${cause}`),
  // what the import's URL answered, in Docker's words (its remotecontext.GetWithStatusError), with its status
  imageImportSourceNotFound: define("ENGINE_ERR_IMAGE_IMPORT_SOURCE_NOT_FOUND", 404, (detail: string) => detail),
  imageImportSourceRefused: define("ENGINE_ERR_IMAGE_IMPORT_SOURCE_REFUSED", 400, (detail: string) => detail),
  imageImportSourceUnauthorized: define("ENGINE_ERR_IMAGE_IMPORT_SOURCE_UNAUTHORIZED", 401, (detail: string) => detail),
  imageImportSourceForbidden: define("ENGINE_ERR_IMAGE_IMPORT_SOURCE_FORBIDDEN", 403, (detail: string) => detail),
  imageImportSourceFailed: define("ENGINE_ERR_IMAGE_IMPORT_SOURCE_FAILED", 500, (detail: string) => detail),
  imageImportSourceInvalid: define(
    "ENGINE_ERR_IMAGE_IMPORT_SOURCE_INVALID",
    400,
    (fromSrc: string, why: string) => `invalid fromSrc "${fromSrc}": ${why}; it is "-" (the tar is the request's body) or an http or https URL`,
  ),
  imageDigestMismatch: define(
    "ENGINE_ERR_IMAGE_DIGEST_MISMATCH",
    400,
    (what: string, expected: string, actual: string) => `${what}: digest mismatch: expected ${expected}, got ${actual}`,
  ),
  imageInvalidChangeCommand: define("ENGINE_ERR_IMAGE_INVALID_CHANGE_COMMAND", 400, (keyword: string) => `${keyword} is not a valid change command`),
  imageInvalidChangeArgs: define("ENGINE_ERR_IMAGE_INVALID_CHANGE_ARGS", 400, (why: string) => why),
  // a tag whose repository is `sha256` (it would read as a digest): Docker's words
  imageTagAmbiguous: define("ENGINE_ERR_IMAGE_TAG_AMBIGUOUS", 400, () => "refusing to create an ambiguous tag using digest algorithm as name"),
  // a tag's, a commit's or an import's `repo` that holds a digest: Docker 28's words for all three
  imageRepoIsDigest: define("ENGINE_ERR_IMAGE_REPO_IS_DIGEST", 400, () => "cannot import digest reference"),
  // DELETE /images/{name} with a name that is only spaces (Docker's missingImageError)
  // a loaded image's `Parent` whose history is not the image's but its last entry (Docker's loader's words)
  imageInvalidParent: define("ENGINE_ERR_IMAGE_INVALID_PARENT", 400, (parent: string, id: string) => `image ${parent} is not a valid parent for ${id}`),
  imageNameBlank: define("ENGINE_ERR_IMAGE_NAME_BLANK", 400, () => "image name cannot be blank"),
  imageLayerUnexportable: define("ENGINE_ERR_IMAGE_LAYER_UNEXPORTABLE", 500, (diffId: string, why: string) => `layer ${diffId} cannot be exported: ${why}`),
  // a layer the store was to keep for an image being made went meanwhile: the daemon's fault, never the client's
  imageLayerMissing: define("ENGINE_ERR_IMAGE_LAYER_MISSING", 500, (chainId: string) => `layer ${chainId} is not in the store`),

  // --- registries ---
  registryInvalidAuthHeader: define("ENGINE_ERR_REGISTRY_INVALID_AUTH_HEADER", 400, (why: string) => `invalid X-Registry-Auth header: ${why}`),
  registryInvalidAddress: define(
    "ENGINE_ERR_REGISTRY_INVALID_ADDRESS",
    400,
    (address: string) => `unable to parse server address "${address}": a registry is named by its host, with a port and an http:// or https:// scheme if need be`,
  ),
  registryUnreachable: define("ENGINE_ERR_REGISTRY_UNREACHABLE", 500, (url: string, cause: string) => `Get "${url}": ${cause}`),
  registryNotSecure: define(
    "ENGINE_ERR_REGISTRY_NOT_SECURE",
    500,
    (url: string, cause: string, host: string) =>
      `Get "${url}": ${cause}; registry ${host} is not secure: secure it with TLS (its CA certificate at /etc/engine/certs.d/${host}/ca.crt if the host does not trust it already) or mark it insecure with --insecure-registry ${host}`,
  ),
  registryV1Only: define(
    "ENGINE_ERR_REGISTRY_LEGACY_ONLY",
    400,
    (host: string) => `registry ${host} speaks only the legacy v1 protocol: pull, push and login need the v2 protocol`,
  ),
  registryNotARegistry: define("ENGINE_ERR_REGISTRY_NOT_A_REGISTRY", 500, (url: string, status: number) => `${url} answered ${status}: not a v2 registry`),
  registryUnauthorized: define("ENGINE_ERR_REGISTRY_UNAUTHORIZED", 401, (detail: string) => detail),
  // 403, not 401: the Docker CLI answers a pull's 401 by asking for a login at the terminal, and
  // Docker's daemon, whose words these are, does not answer 401 here (its 500 is ours to avoid)
  registryNoBasicCredentials: define("ENGINE_ERR_REGISTRY_NO_BASIC_CREDENTIALS", 403, (request: string) => `${request}no basic auth credentials`),
  registryLoginRefused: define(
    "ENGINE_ERR_REGISTRY_LOGIN_REFUSED",
    401,
    (url: string, status: number, statusText: string) => `login attempt to ${url} failed with status: ${status} ${statusText}`,
  ),
  registryAuthFailed: define("ENGINE_ERR_REGISTRY_AUTH_FAILED", 500, (detail: string) => `registry authentication failed: ${detail}`),
  registryAccessDenied: define(
    "ENGINE_ERR_REGISTRY_ACCESS_DENIED",
    404,
    (repo: string, detail: string) => `pull access denied for ${repo}, repository does not exist or may require a login: ${detail}`,
  ),
  registryNotFound: define("ENGINE_ERR_REGISTRY_NOT_FOUND", 404, (what: string, detail: string) => `${what} not found: ${detail}`),
  registryNoMatchingPlatform: define(
    "ENGINE_ERR_REGISTRY_NO_MATCHING_PLATFORM",
    404,
    (platform: string) => `no matching manifest for ${platform} in the manifest list entries`,
  ),
  registryUnsupportedManifest: define(
    "ENGINE_ERR_REGISTRY_UNSUPPORTED_MANIFEST",
    500,
    (ref: string, mediaType: string) => `unsupported manifest media type ${mediaType || "(none)"} for ${ref}`,
  ),
  registryError: define("ENGINE_ERR_REGISTRY_ERROR", 500, (what: string, detail: string) => `${what}: ${detail}`),
  registrySearchUnavailable: define("ENGINE_ERR_REGISTRY_SEARCH_UNAVAILABLE", 500, (host: string, why: string) => `cannot search registry ${host}: ${why}`),
  registryDownloadFailed: define(
    "ENGINE_ERR_REGISTRY_DOWNLOAD_FAILED",
    500,
    (digest: string, attempts: number, cause: string) => `download of ${digest} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${cause}`,
  ),
  registryNoLocalImage: define(
    "ENGINE_ERR_REGISTRY_NO_LOCAL_IMAGE",
    404,
    (name: string) => `An image does not exist locally with the tag: ${name}`,
  ),
  registryPushTagMissing: define("ENGINE_ERR_REGISTRY_PUSH_TAG_MISSING", 404, (ref: string) => `tag does not exist: ${ref}`),

} as const;
