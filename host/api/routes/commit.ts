/**
 * `POST /commit?container=&repo=&tag=&comment=&author=&pause=&changes=`: a new image from a
 * container's changes (host/containers/commit-container.ts). The body, when there is one, is a
 * container configuration for the image (the Docker CLI sends none, or `null`).
 */
import type { FastifyInstance } from "fastify";
import typia from "typia";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import type { ContainerConfig } from "../../../core/images/image-config.js";
import { errors } from "../../../core/errors.js";
import { repoTagReference } from "../../../core/images/reference.js";
import { commitContainer, type CommitDeps } from "../../containers/commit-container.js";
import { queryBool, queryList, queryString, type Query } from "../query.js";
import { bodyCheck, validateBody } from "../validate-body.js";

const validateConfig = bodyCheck(typia.createValidate<ContainerConfig | null | undefined>(), typia.json.schemas<[ContainerConfig], "3.1">());

export interface CommitRouteDeps extends CommitDeps {
  containers: ContainerStore;
}

export function commitRoutes(deps: CommitRouteDeps) {
  return (app: FastifyInstance) => {
    app.post("/commit", async (request, reply) => {
      const query = request.query as Query;
      const ref = queryString(query, "container") ?? "";
      // the body (its type, its JSON) and the name to give before the container, as Docker's router reads them
      const config = validateBody(validateConfig, request.body, request);
      repoTagReference(queryString(query, "repo"), queryString(query, "tag"));
      const c = deps.containers.get(ref);
      const image = await commitContainer(deps, c, {
        ref,
        repo: queryString(query, "repo"),
        tag: queryString(query, "tag"),
        comment: queryString(query, "comment"),
        author: queryString(query, "author"),
        pause: queryBool(query, "pause", true),
        changes: queryList(query, "changes"),
        config,
      }).catch((err: unknown) => {
        // removed while its layer was read (a `docker rm` at the same moment): as if it had not been found
        throw deps.containers.present(c.Id) ? err : errors.containerNotFound(ref);
      });
      return reply.code(201).send({ Id: image.id });
    });
  };
}
