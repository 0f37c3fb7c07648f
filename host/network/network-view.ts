/**
 * How networks look through the API (`GET /networks`, `GET /networks/{id}`), in Docker's shape:
 * scope `local`, the IPAM driver (the daemon's, `default`, or a plugin) with each subnet's gateway and range, and, in inspect,
 * the running containers on it with their endpoint, MAC and addresses.
 */
import { errors } from "../../core/errors.js";
import type { ContainerEndpoint } from "../../core/containers/container-store.js";
import { filterMatches } from "../api/filter-values.js";
import type { NetworkRecord } from "./network-store.js";

export function networkDocument(rec: NetworkRecord, endpoints: readonly ContainerEndpoint[]): Record<string, unknown> {
  const s = rec.spec;
  return {
    Name: s.name,
    Id: s.id,
    Created: s.created,
    Scope: "local",
    Driver: s.driver,
    EnableIPv4: s.enableIPv4,
    EnableIPv6: s.enableIPv6,
    IPAM: {
      Driver: s.ipamDriver ?? "default",
      Options: s.ipamOptions ?? null,
      // IPv4's first, then IPv6's, as Docker's daemon keeps them in two lists
      Config: [...s.subnets].sort((a, b) => Number(a.subnet.includes(":")) - Number(b.subnet.includes(":"))).map((n) => ({
        Subnet: n.subnet,
        ...(n.ipRange ? { IPRange: n.ipRange } : {}),
        // none when no address is reserved for one (Docker's omitempty)
        ...(n.gateway ? { Gateway: n.gateway } : {}),
        ...(n.auxAddresses ? { AuxiliaryAddresses: n.auxAddresses } : {}),
      })),
    },
    Internal: s.internal,
    Attachable: s.attachable,
    Ingress: false,
    ConfigFrom: { Network: "" },
    ConfigOnly: false,
    Containers: Object.fromEntries(
      endpoints.map((ep) => [ep.containerId, { Name: ep.containerName, EndpointID: ep.endpointId, MacAddress: ep.mac, IPv4Address: ep.ipv4 ?? "", IPv6Address: ep.ipv6 ?? "" }]),
    ),
    Options: s.options,
    Labels: s.labels,
  };
}

/**
 * The `filters` of `GET /networks`: a name matches as Docker's `filters.Match` does (equal, or
 * a regular expression found in it), an id matches a part; type is builtin or
 * custom; dangling (one value) takes the networks no container is on, never a builtin one, and
 * `false` every builtin one. Bad values are refused with Docker 28's words.
 */
export function networkFilter(filters: Map<string, string[]>, isBuiltin: (rec: NetworkRecord) => boolean, inUse: (rec: NetworkRecord) => boolean): (rec: NetworkRecord) => boolean {
  const any = (key: string, test: (v: string) => boolean) => !filters.get(key)?.length || filters.get(key)!.some(test);
  const dangling = danglingFilter(filters.get("dangling") ?? []);
  const badType = filters.get("type")?.find((v) => v !== "builtin" && v !== "custom");
  if (badType !== undefined) throw errors.apiInvalidBody(`invalid filter: 'type'='${badType}'`);
  return (rec) =>
    any("name", (v) => filterMatches(v, rec.spec.name)) &&
    any("id", (v) => rec.spec.id.includes(v)) &&
    any("driver", (v) => rec.spec.driver === v) &&
    any("scope", (v) => v === "local") &&
    any("type", (v) => (v === "builtin") === isBuiltin(rec)) &&
    (dangling === undefined || dangling === (!isBuiltin(rec) && !inUse(rec)));
}

function danglingFilter(values: readonly string[]): boolean | undefined {
  if (values.length === 0) return undefined;
  if (values.length > 1) throw errors.apiInvalidBody(`got more than one value for filter key "dangling"`);
  if (values[0] === "true" || values[0] === "1") return true;
  if (values[0] === "false" || values[0] === "0") return false;
  throw errors.apiInvalidBody(`invalid value for filter 'dangling', must be "true" (or "1"), or "false" (or "0")`);
}
