/** The error catalogue, the API itself and authorization (core/errors.ts assembles it). */
import { define } from "./define.js";

export const apiErrors = {
  // --- API ---
  apiVersionTooOld: define(
    "ENGINE_ERR_API_VERSION_TOO_OLD",
    400,
    (client: string, min: string) =>
      `client version ${client} is too old. Minimum supported API version is ${min}, please upgrade your client to a newer version`,
  ),
  apiVersionTooNew: define(
    "ENGINE_ERR_API_VERSION_TOO_NEW",
    400,
    (client: string, max: string) => `client version ${client} is too new. Maximum supported API version is ${max}`,
  ),
  apiPageNotFound: define("ENGINE_ERR_API_PAGE_NOT_FOUND", 404, () => "page not found"),
  apiInvalidBody: define("ENGINE_ERR_API_INVALID_BODY", 400, (detail: string) => detail),
  // Docker's words for a body Go's decoder refuses, whole (host/api/go-json-syntax.ts)
  apiInvalidJson: define("ENGINE_ERR_API_INVALID_JSON", 400, (message: string) => message),
  // Docker's CheckForJSON: a body the route decodes as JSON under another Content-Type
  apiBadContentType: define("ENGINE_ERR_API_BAD_CONTENT_TYPE", 400, (detail: string) => detail),
  apiInvalidParameter: define("ENGINE_ERR_API_INVALID_PARAMETER", 400, (name: string, value: string) => `invalid value for ${name}: "${value}"`),
  systemDfUnknownType: define("ENGINE_ERR_API_DF_UNKNOWN_TYPE", 400, (type: string) => `unknown object type: ${type}`),
  eventsSinceAfterUntil: define("ENGINE_ERR_API_EVENTS_SINCE_AFTER_UNTIL", 400, (since: string, until: string) => `\`since\` time (${since}) cannot be after \`until\` time (${until})`),
  apiGoParseError: define("ENGINE_ERR_API_GO_PARSE", 400, (goMessage: string) => goMessage),
  apiExperimentalDisabled: define(
    "ENGINE_ERR_API_EXPERIMENTAL_DISABLED",
    501,
    () => "This experimental feature is disabled by default. Start the Docker daemon in experimental mode in order to enable it.",
  ),
  apiCheckpointUnsupported: define("ENGINE_ERR_API_CHECKPOINT_UNSUPPORTED", 501, () => "checkpoint and restore are not supported by this daemon (it does not drive CRIU)"),
  apiBodyTooLarge: define("ENGINE_ERR_API_BODY_TOO_LARGE", 413, (limit: number) => `request body larger than ${limit} bytes`),
  apiHeadersTooLarge: define("ENGINE_ERR_API_HEADERS_TOO_LARGE", 431, (limit: number) => `request line and headers larger than ${limit} bytes`),
  apiMalformedRequest: define("ENGINE_ERR_API_MALFORMED_REQUEST", 400, (reason: string) => `malformed HTTP request: ${reason}`),
  apiRequestTimeout: define("ENGINE_ERR_API_REQUEST_TIMEOUT", 408, () => "the request's headers did not all come in time"),
  apiUnsupportedMediaType: define(
    "ENGINE_ERR_API_UNSUPPORTED_MEDIA_TYPE",
    400,
    (type: string) => `unsupported Content-Type header (${type}): must be 'application/json'`,
  ),
  apiUnderPressure: define(
    "ENGINE_ERR_API_UNDER_PRESSURE",
    503,
    (lateMs: number, limitMs: number) => `the daemon is overloaded: its event loop runs ${Math.round(lateMs)} ms late (the limit is ${limitMs} ms); try again later`,
  ),
  apiInternal: define("ENGINE_ERR_API_INTERNAL", 500, (detail: string) => detail),

  // --- authorization ---
  authzBodyTooLarge: define(
    "ENGINE_ERR_AUTHZ_BODY_TOO_LARGE",
    413,
    (size: number | undefined, cap: number) =>
      `request body${size === undefined ? "" : ` of ${size} bytes`} is larger than the ${cap} bytes an authorization plugin is shown: with authorization plugins active, a JSON body they cannot judge is refused`,
  ),
  authzDenied: define(
    "ENGINE_ERR_AUTHZ_DENIED",
    403,
    (plugin: string, msg: string) => `authorization denied by plugin ${plugin}: ${msg}`,
  ),
  authzResponseDenied: define(
    "ENGINE_ERR_AUTHZ_RESPONSE_DENIED",
    403,
    (plugin: string, msg: string) => `authorization denied by plugin ${plugin}: ${msg}`,
  ),
  authzPluginFailed: define(
    "ENGINE_ERR_AUTHZ_PLUGIN_FAILED",
    403,
    (plugin: string, detail: string) => `plugin ${plugin} failed with error: ${detail}`,
  ),

} as const;
