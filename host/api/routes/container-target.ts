/**
 * The container a `/containers/:id/...` route names. Routes keep the reference as the client
 * wrote it beside the record: messages and events name the container the way the client did.
 */

import type { FastifyRequest } from "fastify";
import type { ContainerRecord, ContainerStore } from "../../../core/containers/container-store.js";

/** The `:id` of the request and its container; an unknown one throws the catalogue's 404. */
export function containerTarget(containers: ContainerStore, request: FastifyRequest): { ref: string; c: ContainerRecord } {
  const ref = (request.params as { id: string }).id;
  return { ref, c: containers.get(ref) };
}
