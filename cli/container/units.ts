/**
 * The value types of container flags as the Docker CLI reads them: sizes (`64m`, `1.5g`,
 * binary multiples), CPU counts as rationals turned into nanoCPUs, ulimits (`nofile=100:200`),
 * `KEY=VALUE` lists, environment entries, labels and extra hosts. Errors are worded as the
 * Docker CLI's, for the flag-error message.
 */
import { isIP } from "node:net";
import { goQuote } from "../../core/build/go-text.js";

const SIZE_UNITS: Record<string, number> = { k: 1, m: 2, g: 3, t: 4, p: 5 };

/** Go's strconv.ParseFloat on a decimal text, with its error. */
function parseFloat64(text: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`strconv.ParseFloat: parsing ${goQuote(text)}: invalid syntax`);
  return Number(text);
}

/**
 * go-units' RAMInBytes (v0.5): a number, then a unit (`b`, `k`, `kb`, `kib`... any case; 1k is
 * 1024), a space allowed between them: `512`, `64m`, `1.5G`, `10 KiB`. Errors as its own.
 */
export function parseBytes(value: string): number {
  let sep = -1;
  for (let i = value.length - 1; i >= 0; i--) {
    if ("0123456789. ".includes(value[i])) {
      sep = i;
      break;
    }
  }
  if (sep < 0) throw new Error(`invalid size: '${value}'`);
  const num = value[sep] === " " ? value.slice(0, sep) : value.slice(0, sep + 1);
  const suffix = value.slice(sep + 1);
  const size = parseFloat64(num);
  if (size < 0) throw new Error(`invalid size: '${value}'`);
  if (suffix === "") return Math.trunc(size);
  const sfx = suffix.toLowerCase();
  const bad = () => new Error(`invalid suffix: '${suffix.length > 3 ? suffix : sfx}'`);
  if (sfx.length > 3) throw bad();
  if (sfx[0] === "b") {
    if (sfx.length > 1) throw bad();
    return Math.trunc(size);
  }
  const power = SIZE_UNITS[sfx[0]];
  if (power === undefined || (sfx.length === 2 && sfx[1] !== "b") || (sfx.length === 3 && sfx.slice(1) !== "ib")) throw bad();
  return Math.trunc(size * 1024 ** power);
}

/** Go's strconv.ParseUint(v, 10, bits), with its messages. */
export function parseUint(v: string, bits: 16 | 64): number {
  if (!/^\d+$/.test(v)) throw new Error(`strconv.ParseUint: parsing ${goQuote(v)}: invalid syntax`);
  if (BigInt(v) >= 1n << BigInt(bits)) throw new Error(`strconv.ParseUint: parsing ${goQuote(v)}: value out of range`);
  return Number(v);
}

/** `--memory-swap`: a size, or -1 for unlimited swap. */
export function parseMemSwap(v: string): number {
  return v === "-1" ? -1 : parseBytes(v);
}

/** `--link NAME[:ALIAS]` as the Docker CLI's ValidateLink checks it. */
export function validLink(v: string): string {
  if (v === "") throw new Error("empty string specified for links");
  if (v.split(":").length > 2) throw new Error(`bad format for links: ${v}`);
  return v;
}

/** A CPU count (`1.5`, `3/2`) as nanoCPUs, exactly: a value finer than a nanoCPU is refused. */
export function parseNanoCpus(value: string): number {
  const frac = /^(-?)(\d+)\/(\d+)$/.exec(value);
  if (frac) {
    const nanos = (BigInt(frac[2]) * 1_000_000_000n) / BigInt(frac[3]);
    if ((BigInt(frac[2]) * 1_000_000_000n) % BigInt(frac[3]) !== 0n) throw new Error("value is too precise");
    return Number(frac[1] ? -nanos : nanos);
  }
  const dec = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value);
  if (!dec || (dec[2] === "" && !dec[3])) throw new Error(`failed to parse ${value} as a rational number`);
  const fraction = (dec[3] ?? "").replace(/0+$/, "");
  if (fraction.length > 9) throw new Error("value is too precise");
  const nanos = BigInt(dec[2] || "0") * 1_000_000_000n + BigInt((fraction || "0").padEnd(9, "0"));
  return Number(dec[1] === "-" ? -nanos : nanos);
}

const ULIMIT_NAMES = ["core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice", "nofile", "nproc", "rss", "rtprio", "rttime", "sigpending", "stack"];

export interface Ulimit {
  Name: string;
  Hard: number;
  Soft: number;
}

/** The ulimits of `--ulimit`s: one per name (the last given), sorted by name as the Docker CLI sends them. */
export function ulimitList(values: readonly string[]): Ulimit[] {
  const byName = new Map(values.map((v) => parseUlimit(v)).map((u) => [u.Name, u]));
  return [...byName.values()].sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
}

/** `name=soft[:hard]`, the hard limit the soft one when not given. */
export function parseUlimit(value: string): Ulimit {
  const eq = value.indexOf("=");
  if (eq < 0) throw new Error(`invalid ulimit argument: ${value}`);
  const name = value.slice(0, eq);
  if (!ULIMIT_NAMES.includes(name)) throw new Error(`invalid ulimit type: ${name}`);
  const [softText, hardText] = value.slice(eq + 1).split(/:(.*)/s);
  const int = (s: string) => {
    if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.ParseInt: parsing "${s}": invalid syntax`);
    return Number(s);
  };
  const soft = int(softText);
  const hard = hardText === undefined ? soft : int(hardText);
  if (soft > hard) throw new Error(`ulimit soft limit must be less than or equal to hard limit: ${soft} > ${hard}`);
  return { Name: name, Hard: hard, Soft: soft };
}

/** `KEY=VALUE` strings as a map; a key alone gets the empty value. */
export function keyValueMap(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq < 0) out[item] = "";
    else out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/** `-e KEY=VALUE` (and `--build-arg`) as given; a KEY alone takes the client's value when it has one. */
export function validEnv(env: NodeJS.ProcessEnv) {
  return (v: string): string => {
    const eq = v.indexOf("=");
    const key = eq < 0 ? v : v.slice(0, eq);
    if (key === "") throw new Error(`invalid environment variable: ${v}`);
    if (eq >= 0) return v;
    return env[key] !== undefined ? `${key}=${env[key]}` : v;
  };
}

/** `--label KEY[=VALUE]`: a name is needed, without whitespace (the Docker CLI's ValidateLabel). */
export function validLabel(v: string): string {
  const key = v.split("=")[0].trim();
  if (key === "") throw new Error(`invalid label '${v}': empty name`);
  if (/[ \t]/.test(key)) throw new Error(`label '${key}' contains whitespaces`);
  return v;
}

/**
 * `--add-host NAME:IP` (or `NAME=IP`, an IPv6 address maybe in brackets, or `host-gateway`),
 * written as `NAME:IP` for the API, as the Docker CLI's ValidateExtraHost does.
 */
export function validExtraHost(v: string): string {
  let sep = v.indexOf("=");
  if (sep < 0) sep = v.indexOf(":");
  const name = sep < 0 ? "" : v.slice(0, sep);
  if (name === "" || name.includes(":")) throw new Error(`bad format for add-host: ${goQuote(v)}`);
  let address = v.slice(sep + 1);
  if (address !== "host-gateway") {
    if (address.length > 2 && address.startsWith("[") && address.endsWith("]")) address = address.slice(1, -1);
    if (isIP(address.trim()) === 0) throw new Error(`invalid IP address in add-host: ${goQuote(address)}`);
  }
  return `${name}:${address}`;
}
