/**
 * The networks API: list, inspect, create, remove, connect, disconnect, prune. The networks
 * themselves are the network manager's; a container's use of them is container-networks.ts's.
 */
import type { FastifyInstance } from "fastify";
import typia from "typia";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import type { NetworkConnectRequest, NetworkCreateRequest, NetworkDisconnectRequest } from "../../../core/network/network-request.js";
import type { ContainerNetworks } from "../../network/container-networks.js";
import { isModeNetwork, type NetworkManager } from "../../network/network-manager.js";
import type { NetworkRecord } from "../../network/network-store.js";
import { networkDocument, networkFilter } from "../../network/network-view.js";
import { labelsMatch, untilTime } from "../filter-values.js";
import { checkFilterKeys, queryFilters, type Query } from "../query.js";
import { bodyCheck, validateBody } from "../validate-body.js";
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";

const validateCreate = bodyCheck(typia.createValidate<NetworkCreateRequest>(), typia.json.schemas<[NetworkCreateRequest], "3.1">());
const validateConnect = bodyCheck(typia.createValidate<NetworkConnectRequest>(), typia.json.schemas<[NetworkConnectRequest], "3.1">());
const validateDisconnect = bodyCheck(typia.createValidate<NetworkDisconnectRequest>(), typia.json.schemas<[NetworkDisconnectRequest], "3.1">());

export interface NetworkRouteDeps {
  networks: NetworkManager;
  endpoints: ContainerNetworks;
  containers: ContainerStore;
}

export function networkRoutes(deps: NetworkRouteDeps) {
  const { networks, endpoints, containers } = deps;
  const idOf = (request: { params: unknown }) => (request.params as { id: string }).id;
  return (app: FastifyInstance) => {
    app.get("/networks", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["dangling", "driver", "id", "label", "name", "scope", "type"]);
      const builtin = (rec: NetworkRecord) => !!rec.spec.isDefault || isModeNetwork(rec.spec);
      const pick = networkFilter(filters, builtin, (rec) => networks.activeEndpoints(rec.spec.id).length > 0);
      // each network's containers are listed below API 1.28 only, as Docker's route lists them
      const withContainers = compareApiVersions(requestedApiVersion(request.raw), "1.28") < 0;
      return networks
        .list()
        .filter((rec) => pick(rec) && labelsMatch(rec.spec.labels, filters))
        .map((rec) => networkDocument(rec, withContainers ? networks.activeEndpoints(rec.spec.id) : []));
    });

    app.get("/networks/:id", async (request) => {
      const rec = networks.network(idOf(request));
      return networkDocument(rec, networks.activeEndpoints(rec.spec.id));
    });

    app.post("/networks/create", async (request, reply) => {
      const body = validateBody(validateCreate, request.body ?? {}, request);
      // (EnableIPv4 is read from API 1.48, as Docker's route reads it)
      if (compareApiVersions(requestedApiVersion(request.raw), "1.48") < 0) delete body.EnableIPv4;
      const rec = await networks.create(body);
      return reply.code(201).send({ Id: rec.spec.id, Warning: "" });
    });

    app.delete("/networks/:id", async (request, reply) => {
      await networks.remove(idOf(request));
      return reply.code(204).send();
    });

    app.post("/networks/:id/connect", async (request, reply) => {
      const body = validateBody(validateConnect, request.body ?? {}, request);
      await endpoints.connect(containers.get(body.Container ?? ""), idOf(request), body.EndpointConfig ?? {});
      return reply.code(200).send();
    });

    app.post("/networks/:id/disconnect", async (request, reply) => {
      const body = validateBody(validateDisconnect, request.body ?? {}, request);
      await endpoints.disconnect(containers.get(body.Container ?? ""), idOf(request), !!body.Force);
      return reply.code(200).send();
    });

    app.post("/networks/prune", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["label", "label!", "until"]);
      const until = filters.get("until")?.[0];
      const before = until === undefined ? Infinity : untilTime(until);
      const deleted = await networks.prune((rec) => Date.parse(rec.spec.created) > before || !labelsMatch(rec.spec.labels, filters));
      return { NetworksDeleted: deleted };
    });
  };
}
