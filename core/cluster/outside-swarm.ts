/**
 * What a node outside a swarm answers to the cluster-mode endpoints, since engined never joins
 * one (docs/cluster.md): Docker's daemon in that state answers every read and write with 503
 * "not a swarm manager", a leave with 503 "not part of a swarm" (docker-py's
 * `swarm.leave(force=True)` takes that as done), and checks a request's own parameters first,
 * so that a malformed `version` or a logs request without a stream is still a 400. Only init
 * and join differ: on Docker's daemon they would start or join a cluster, which engined
 * cannot do, so they are a 501.
 */
import { errors } from "../errors.js";

export type ObjectKind = "swarm" | "node" | "service" | "secret" | "config";

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * The `version` an update names, read as Go's strconv.ParseUint(raw, 10, 64), whose error text
 * Docker's message carries for swarm, node and service updates (secrets and configs say less).
 */
export function objectVersion(kind: ObjectKind, raw: string | undefined): bigint {
  const value = raw ?? "";
  const detailed = kind !== "secret" && kind !== "config";
  if (!/^\d+$/.test(value)) throw errors.clusterInvalidVersion(kind, value, detailed ? "invalid syntax" : undefined);
  const n = BigInt(value);
  if (n > UINT64_MAX) throw errors.clusterInvalidVersion(kind, value, detailed ? "value out of range" : undefined);
  return n;
}

/** Inspect, list, create, update, remove, unlock: the node is no manager. */
export function requireManager(): never {
  throw errors.clusterNotManager();
}

/** `POST /swarm/leave`, with or without `force`. */
export function leave(): never {
  throw errors.clusterNotMember();
}

/** `POST /swarm/init` and `POST /swarm/join`. */
export function join(): never {
  throw errors.clusterJoinUnsupported();
}

/** Service and task logs: a request for neither stream is refused before anything else. */
export function logs(stdout: boolean, stderr: boolean): never {
  if (!stdout && !stderr) throw errors.clusterLogsNoStream();
  return requireManager();
}
