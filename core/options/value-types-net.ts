/** Value types for addresses: IPs, CIDR subnets, address pools, host-gateway addresses. */
import { isIP } from "node:net";
import typia from "typia";
import { describeJson, list, string, ValueError, type ValueType } from "./value-types.js";

export function checkIp(raw: string): void {
  if (isIP(raw) === 0) throw new ValueError("expected an IP address");
}

/** `addr/prefix`: an IPv4 or IPv6 address with a prefix length that fits it. */
export function checkCidr(raw: string, family?: 4 | 6): void {
  const m = /^(.+)\/(\d{1,3})$/.exec(raw);
  const version = m ? isIP(m[1]) : 0;
  if (!m || version === 0) throw new ValueError("expected a subnet in CIDR notation, like 172.30.0.0/16");
  if (family && version !== family) throw new ValueError(`expected an IPv${family} subnet`);
  if (Number(m[2]) > (version === 4 ? 32 : 128)) throw new ValueError("prefix length too long for the address");
}

export const ip = string(checkIp, "ip");
export const cidr4 = string((raw) => checkCidr(raw, 4), "cidr");
export const cidr6 = string((raw) => checkCidr(raw, 6), "cidr");
export const ipList = list(checkIp);

export interface AddressPool {
  base: string;
  size: number;
}

const validatePools = typia.createValidate<AddressPool[]>();

function checkPool(pool: AddressPool): AddressPool {
  checkCidr(pool.base);
  const [, prefix] = pool.base.split("/");
  const max = pool.base.includes(":") ? 128 : 32;
  if (!Number.isInteger(pool.size) || pool.size < Number(prefix) || pool.size > max) {
    throw new ValueError(`pool size ${pool.size} must be between the base's prefix length (${prefix}) and ${max}`);
  }
  return { base: pool.base, size: pool.size };
}

/** `--default-address-pool base=172.30.0.0/16,size=24` (repeatable); an array of objects in the file. */
export const addressPools: ValueType<AddressPool[]> = {
  name: "pool-options",
  repeatable: true,
  parse(raw, previous) {
    const fields = Object.fromEntries(raw.split(",").map((part) => part.split("=", 2) as [string, string]));
    const unknown = Object.keys(fields).filter((k) => k !== "base" && k !== "size");
    if (unknown.length || !fields.base || !fields.size || !/^\d+$/.test(fields.size)) {
      throw new ValueError("expected base=<CIDR>,size=<prefix length>");
    }
    return [...(previous ?? []), checkPool({ base: fields.base, size: Number(fields.size) })];
  },
  fromFile(value) {
    const checked = validatePools(value);
    if (!checked.success) throw new ValueError(typiaProblem(checked.errors, "an array of {base: CIDR, size: integer}"));
    return checked.data.map(checkPool);
  },
  toFile: (v) => v,
  show: (v) => v.map((p) => `base=${p.base},size=${p.size}`).join(" "),
};

/** `--host-gateway-ip` (twice at most: one IPv4, one IPv6); `host-gateway-ips` or the legacy single `host-gateway-ip` in the file. */
export const hostGatewayIps: ValueType<string[]> = {
  name: "list",
  repeatable: true,
  parse(raw, previous) {
    return checkFamilies([...(previous ?? []), ip.parse(raw, undefined)]);
  },
  fromFile(value) {
    if (typeof value === "string") return checkFamilies([ip.fromFile(value)]);
    return checkFamilies(ipList.fromFile(value));
  },
  toFile: (v) => v,
  show: (v) => `[${v.join(", ")}]`,
};

function checkFamilies(ips: string[]): string[] {
  const v4 = ips.filter((a) => isIP(a) === 4).length;
  const v6 = ips.filter((a) => isIP(a) === 6).length;
  if (v4 > 1 || v6 > 1) throw new ValueError("at most one IPv4 and one IPv6 address");
  return ips;
}

/** A typia report as one line: where, and what was expected there. */
export function typiaProblem(errs: { path: string; expected: string; value: unknown }[], shape: string): string {
  const first = errs[0];
  if (!first) return `expected ${shape}`;
  const where = first.path.replace(/^\$input/, "");
  return `expected ${shape}: at ${where || "the top"}, expected ${first.expected}, got ${describeJson(first.value)}`;
}
