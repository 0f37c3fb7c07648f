/**
 * The error catalogue. Every error the engine reports to a client or an operator is defined
 * once, in the file of its area under core/errors/ (api, config, images, containers, resources,
 * host, and the builder's: build (the Dockerfile), builder (its steps), build-context, build-cache;
 * cri, the Container Runtime Interface; and managed-plugins, Docker's `/plugins`), and
 * reached here as `errors.<name>`: a code `ENGINE_ERR_<AREA>_<WHAT>`, the HTTP status the API
 * answers with (the Docker mapping: 400 invalid parameter, 401, 403 forbidden,
 * 404 not found, 409 conflict, 304 not modified, 500 system, 501 not implemented, 503
 * unavailable) and the message clients expect.
 * `docs/errors.md` lists the catalogue; test/errors.test.ts keeps the two in step.
 */
import { EngineError } from "./errors/define.js";
import { apiErrors } from "./errors/api.js";
import { configErrors } from "./errors/config.js";
import { imagesErrors } from "./errors/images.js";
import { containersErrors } from "./errors/containers.js";
import { resourcesErrors } from "./errors/resources.js";
import { hostErrors } from "./errors/host.js";
import { buildErrors } from "./errors/build.js";
import { builderErrors } from "./errors/builder.js";
import { buildContextErrors } from "./errors/build-context.js";
import { buildCacheErrors } from "./errors/build-cache.js";
import { criErrors } from "./errors/cri.js";
import { managedPluginsErrors } from "./errors/managed-plugins.js";

export { EngineError };

/** One catalogue, assembled from one file per area (core/errors/). */
export const errors = {
  ...apiErrors,
  ...configErrors,
  ...imagesErrors,
  ...containersErrors,
  ...resourcesErrors,
  ...hostErrors,
  ...buildErrors,
  ...builderErrors,
  ...buildContextErrors,
  ...buildCacheErrors,
  ...criErrors,
  ...managedPluginsErrors,
} as const;

/** Any thrown value as an EngineError: unknown failures become 500 with their message. */
export function toEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return errors.apiInternal(message);
}
