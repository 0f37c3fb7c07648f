/**
 * How networks look through the API (`GET /networks`, `GET /networks/{id}`), in Docker's shape:
 * scope `local`, the default IPAM driver with each subnet's gateway and range, and, in inspect,
 * the running containers on it with their endpoint, MAC and addresses.
 */
import type { ContainerEndpoint } from "../../core/containers/container-store.js";
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
      Driver: "default",
      Options: s.ipamOptions ?? null,
      Config: s.subnets.map((n) => ({
        Subnet: n.subnet,
        ...(n.ipRange ? { IPRange: n.ipRange } : {}),
        Gateway: n.gateway,
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

/** The `filters` of `GET /networks`: name and id match a part, as Docker's do; type is builtin or custom. */
export function networkFilter(filters: Map<string, string[]>, isBuiltin: (rec: NetworkRecord) => boolean, inUse: (rec: NetworkRecord) => boolean): (rec: NetworkRecord) => boolean {
  const any = (key: string, test: (v: string) => boolean) => !filters.get(key)?.length || filters.get(key)!.some(test);
  return (rec) =>
    any("name", (v) => rec.spec.name.includes(v)) &&
    any("id", (v) => rec.spec.id.includes(v)) &&
    any("driver", (v) => rec.spec.driver === v) &&
    any("scope", (v) => v === "local") &&
    any("type", (v) => (v === "builtin") === isBuiltin(rec)) &&
    any("dangling", (v) => ["true", "1"].includes(v) === !inUse(rec));
}
