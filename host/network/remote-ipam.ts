/**
 * An IPAM driver served by another process (`IpamDriver` in its `Plugin.Activate` answer;
 * libnetwork's "remote" IPAM protocol), named by `docker network create --ipam-driver <name>`
 * and found as host/remote-plugins describes. It hands out the network's pools and the
 * containers' addresses instead of the daemon's own address management:
 *
 *   open -> GetCapabilities (optional: `RequiresMACAddress`), GetDefaultAddressSpaces
 *   network create -> per pool, IPv4's first: RequestPool {AddressSpace, Pool, SubPool, Options, V6},
 *                     RequestAddress of its gateway {PoolID, Address, Options: {RequestAddressType:
 *                     com.docker.network.gateway}} (unless the pool's Data names one, or the network
 *                     driver uses none), then of each auxiliary address {PoolID, Address, Options: null}
 *   endpoint (a container's start or connect) -> RequestAddress {PoolID, Address (a fixed one, or ""), Options}
 *   its end -> ReleaseAddress {PoolID, Address}
 *   network remove -> per pool: ReleaseAddress of its gateway and auxiliary addresses, ReleasePool {PoolID}
 *
 * An answer's non-empty `Error` fails the call as `remote: <Error>`, Docker's words.
 */
import { randomBytes } from "node:crypto";
import type { NetworkSpec, SubnetConfig } from "../../core/contracts/network.js";
import { Cidr } from "../../core/network/cidr.js";
import { optional } from "../remote-plugins/client.js";
import type { RemotePlugin } from "../remote-plugins/remote-plugins.js";

export const IPAM_DRIVER_INTERFACE = "IpamDriver";
/** The option of a RequestAddress that asks for a network's gateway, and the Data key of a pool that names one. */
const REQUEST_ADDRESS_TYPE = "RequestAddressType";
const GATEWAY_LABEL = "com.docker.network.gateway";
const MAC_LABEL = "com.docker.network.endpoint.macaddress";

/** One pool a network create asks for: a subnet given by the request, or none (the plugin chooses). */
export interface PoolRequest {
  family: 4 | 6;
  subnet?: string;
  ipRange?: string;
  gateway?: string;
  auxAddresses?: Record<string, string>;
}

/** An address the plugin gave an endpoint. */
export interface RemoteAddress {
  address: string;
  /** With the prefix length the plugin gave. */
  cidr: string;
  /** The network's gateway in that pool ("" when it has none). */
  gateway: string;
}

export class RemoteIpam {
  private constructor(
    readonly name: string,
    private readonly plugin: RemotePlugin,
    /** The address space local networks' pools are asked in. */
    readonly addressSpace: string,
    /** The plugin wants the endpoint's MAC with its address request. */
    readonly requiresMac: boolean,
  ) {}

  /** The driver, once the plugin is active, serves IPAM and has said its address spaces. */
  static async open(plugin: RemotePlugin): Promise<RemoteIpam> {
    await plugin.activation.require(IPAM_DRIVER_INTERFACE);
    // (optional: a plugin without it has no capabilities, as Docker registers it)
    const caps = await optional(call<{ RequiresMACAddress?: unknown }>(plugin, "GetCapabilities", undefined));
    const spaces = await call<{ LocalDefaultAddressSpace?: unknown }>(plugin, "GetDefaultAddressSpaces", undefined);
    const local = typeof spaces.LocalDefaultAddressSpace === "string" ? spaces.LocalDefaultAddressSpace : "";
    return new RemoteIpam(plugin.name, plugin, local, caps?.RequiresMACAddress === true);
  }

  /**
   * The network's pools, in order (IPv4's first, as Docker asks them), each with its gateway
   * (unless `gatewayless` says the driver uses none of that family) and auxiliary addresses
   * reserved. What was taken is given back when a later step fails.
   */
  async requestPools(spec: NetworkSpec, requests: readonly PoolRequest[], gatewayless?: { 4: boolean; 6: boolean }): Promise<SubnetConfig[]> {
    const out: SubnetConfig[] = [];
    try {
      for (const r of [...requests].sort((a, b) => a.family - b.family)) {
        const pool = await call<{ PoolID?: unknown; Pool?: unknown; Data?: Record<string, unknown> | null }>(this.plugin, "RequestPool", {
          AddressSpace: this.addressSpace,
          Pool: r.subnet ?? "",
          SubPool: r.ipRange ?? "",
          Options: spec.ipamOptions ?? {},
          V6: r.family === 6,
        });
        const poolId = typeof pool.PoolID === "string" ? pool.PoolID : "";
        const subnet = poolCidr(pool.Pool, r.family);
        const taken: SubnetConfig = { subnet, gateway: "", poolId, ...(r.ipRange ? { ipRange: r.ipRange } : {}), ...(r.subnet ? {} : { fromPool: true }) };
        out.push(taken);
        const named = typeof pool.Data?.[GATEWAY_LABEL] === "string" ? addressOf(pool.Data[GATEWAY_LABEL] as string) : "";
        taken.gateway = named;
        // a gateway asked for is reserved whatever the pool named; without one, the plugin's choice
        if (r.gateway || (!named && !gatewayless?.[r.family])) {
          try {
            const answer = await this.requestAddress(poolId, r.gateway ?? "", { [REQUEST_ADDRESS_TYPE]: GATEWAY_LABEL });
            taken.gateway = addressOf(answer);
          } catch (err) {
            throw new Error(`failed to allocate gateway (${r.gateway ?? ""}): ${(err as Error).message}`, { cause: err });
          }
        }
        for (const [key, address] of Object.entries(r.auxAddresses ?? {})) {
          try {
            await this.requestAddress(poolId, address, null);
          } catch (err) {
            throw new Error(`failed to allocate secondary ip address (${key}:${address}): ${(err as Error).message}`, { cause: err });
          }
          taken.auxAddresses = { ...taken.auxAddresses, [key]: address };
        }
      }
      return out;
    } catch (err) {
      await this.releasePools(out);
      throw err;
    }
  }

  /** The pools given back, each after its gateway and auxiliary addresses; failures are the caller's to log (all are tried). */
  async releasePools(subnets: readonly SubnetConfig[]): Promise<Error[]> {
    const failures: Error[] = [];
    const attempt = (p: Promise<unknown>) => p.catch((err: Error) => void failures.push(err));
    for (const s of subnets) {
      if (!s.poolId) continue;
      for (const address of [s.gateway, ...Object.values(s.auxAddresses ?? {})].filter((a) => a !== "")) await attempt(this.releaseAddress(s.poolId, address));
      await attempt(call(this.plugin, "ReleasePool", { PoolID: s.poolId }));
    }
    return failures;
  }

  /**
   * An endpoint's address of `family` from the network's pool of that family (the one holding
   * `fixed` when one is asked for); `mac` goes with it when the plugin asked for it.
   */
  async endpointAddress(spec: NetworkSpec, family: 4 | 6, fixed: string | undefined, mac: string): Promise<RemoteAddress> {
    const pools = spec.subnets.filter((s) => s.poolId && Cidr.parse(s.subnet).family === family);
    const pool = (fixed && pools.find((s) => Cidr.parse(s.subnet).containsCidr(Cidr.single(fixed)))) || pools[0];
    if (!pool) throw new Error(`the network has no IPv${family} pool of IPAM driver ${this.name}`);
    const cidr = await this.requestAddress(pool.poolId!, fixed ?? "", this.requiresMac ? { [MAC_LABEL]: mac } : null);
    return { address: addressOf(cidr), cidr, gateway: pool.gateway };
  }

  /** An endpoint's address given back, to the network's pool that holds it. */
  async releaseEndpointAddress(spec: NetworkSpec, cidr: string): Promise<void> {
    const address = addressOf(cidr);
    const pool = spec.subnets.find((s) => s.poolId && Cidr.parse(s.subnet).containsCidr(Cidr.single(address)));
    if (pool) await this.releaseAddress(pool.poolId!, address);
  }

  /** The MAC an endpoint that asked for none gets when the plugin wants one with the request (Docker's random one). */
  static randomMac(): string {
    const bytes = randomBytes(6);
    bytes[0] = (bytes[0] & 0xfe) | 0x02; // locally administered, unicast
    return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(":");
  }

  private async requestAddress(poolId: string, address: string, options: Record<string, string> | null): Promise<string> {
    const answer = await call<{ Address?: unknown }>(this.plugin, "RequestAddress", { PoolID: poolId, Address: address, Options: options });
    if (typeof answer.Address !== "string" || answer.Address === "") throw new Error("no address returned");
    if (!answer.Address.includes("/")) throw new Error(`the IPAM plugin's address is not in CIDR form: ${answer.Address}`);
    return answer.Address;
  }

  private async releaseAddress(poolId: string, address: string): Promise<void> {
    await call(this.plugin, "ReleaseAddress", { PoolID: poolId, Address: address });
  }
}

/** `IpamDriver.<method>`: the answer, or its `Error` as the failure in Docker's words. */
async function call<T>(plugin: RemotePlugin, method: string, body: Record<string, unknown> | undefined): Promise<T> {
  const answer = ((await plugin.client.call(`${IPAM_DRIVER_INTERFACE}.${method}`, body)) ?? {}) as T & { Error?: unknown };
  if (typeof answer.Error === "string" && answer.Error !== "") throw new Error(`remote: ${answer.Error}`);
  return answer;
}

/** The pool a plugin answered, checked and in its canonical form. */
function poolCidr(value: unknown, family: 4 | 6): string {
  let cidr: Cidr;
  try {
    cidr = Cidr.parse(String(value ?? ""));
  } catch {
    throw new Error(`the IPAM plugin answered no valid pool: ${JSON.stringify(value)}`);
  }
  if (cidr.family !== family) throw new Error(`the IPAM plugin answered pool ${String(value)} for an IPv${family} request`);
  return cidr.toString();
}

function addressOf(cidr: string): string {
  return cidr.split("/")[0];
}
