/**
 * Legacy container links (`--link db:alias`), the text Docker's daemon makes of them: how a
 * `HostConfig.Links` entry reads, the environment variables a linking container gets for each
 * link, its `/etc/hosts` line, and the address change written into a running parent's hosts file
 * when the linked container starts again. Pure: the resolution of names to containers, and when
 * each is used, are host/containers/links.ts's.
 *
 * Vocabulary, Docker's: the container that asks for the link is the parent, the one it links to
 * the child; a link's name is the parent's name and the alias (`/web/db`), and the child can be
 * found under that name as under its own.
 */
import { posix } from "node:path";
import { errors } from "../errors.js";

/** One link of a parent, as its record keeps it. */
export interface ContainerLink {
  /** `/<parent name>/<alias>`: the link's name. */
  Name: string;
  /** The child's full id: the link follows the child through a rename. */
  ChildId: string;
  /** The child's name when last known (shown for a child removed since). */
  ChildName: string;
}

/**
 * A `Links` entry: `name:alias`, or `name` (the alias is the name), or the form inspect shows
 * (`/db:/web/alias`), whose alias is the last part of its second half. Docker's messages.
 */
export function parseLink(entry: string): { name: string; alias: string } {
  if (entry === "") throw errors.containerLinkInvalid("empty string specified for links");
  const parts = entry.split(":");
  if (parts.length > 2) throw errors.containerLinkInvalid(`bad format for links: ${entry}`);
  if (parts.length === 1) return { name: entry, alias: entry };
  const [name, alias] = parts as [string, string];
  if (name.startsWith("/")) return { name: name.slice(1), alias: posix.basename(alias) };
  return { name, alias };
}

/** A link's name: the alias under the parent's name (`/web` and `db`: `/web/db`). */
export function linkName(parentName: string, alias: string): string {
  return posix.join(parentName, alias);
}

/** The alias a link's name ends with. */
export function aliasOf(name: string): string {
  return posix.basename(name);
}

interface Port {
  /** The key's port part as written (`80`). */
  text: string;
  num: number;
  proto: string;
  key: string;
}

function parsePort(key: string): Port {
  const cut = key.indexOf("/");
  const text = cut < 0 ? key : key.slice(0, cut);
  const proto = cut < 0 ? "tcp" : key.slice(cut + 1);
  return { text, num: /^\d+$/.test(text) ? Number(text) : NaN, proto, key };
}

const sameProto = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** TCP ports first, then the others by protocol; by number within a protocol. */
function withTcpPriority(a: Port, b: Port): number {
  if (sameProto(a.proto, b.proto)) return (Number.isNaN(a.num) ? 0 : a.num) - (Number.isNaN(b.num) ? 0 : b.num);
  const order = (sameProto(a.proto, "tcp") ? -1 : 0) + (sameProto(b.proto, "tcp") ? 1 : 0);
  if (order !== 0) return order;
  const [x, y] = [a.proto.toLowerCase(), b.proto.toLowerCase()];
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface LinkEnvInput {
  /** The link's name (`/web/db`). */
  name: string;
  /** The child's address on the default network. */
  childIp: string;
  /** The child's `Config.Env`. */
  childEnv: readonly string[];
  /** The child's `Config.ExposedPorts` keys (`80/tcp`, `53/udp`). */
  exposedPorts: readonly string[];
}

/**
 * The variables one link gives the parent, in the order of Docker 28's daemon: `ALIAS_PORT` (the
 * first port: the lowest TCP one, else the lowest of the first protocol), then per port
 * `ALIAS_PORT_<n>_<PROTO>` with `_ADDR`, `_PORT`, `_PROTO`, and after each run of consecutive
 * ports of one protocol its `_START`, `_PORT_START`, `_END` and `_PORT_END`; then `ALIAS_NAME`
 * and `ALIAS_ENV_<var>` for each of the child's variables but HOME and PATH. The alias is the
 * link's last part in upper case, `-` made `_`. (Docker 20.10 sorted ports by number alone and
 * wrote a run's variables before the ports', with `_ADDR` and `_PROTO` again; only runs of 3 or
 * more counted.)
 */
export function linkEnv(input: LinkEnvInput): string[] {
  const alias = aliasOf(input.name).toUpperCase().replaceAll("-", "_");
  const ip = input.childIp;
  const ports = input.exposedPorts.map(parsePort).sort(withTcpPriority);
  const env: string[] = [];
  let start: Port | undefined;
  let end: Port | undefined;
  ports.forEach((p, i) => {
    if (i === 0) {
      start = end = p;
      env.push(`${alias}_PORT=${p.proto}://${ip}:${p.text}`);
    }
    if (Number.isNaN(p.num)) return;
    const prefix = `${alias}_PORT_${p.num}_${p.proto.toUpperCase()}`;
    env.push(`${prefix}=${p.proto}://${ip}:${p.num}`, `${prefix}_ADDR=${ip}`, `${prefix}_PORT=${p.num}`, `${prefix}_PROTO=${p.proto}`);
    if (Number.isNaN(end!.num)) return;
    if (p.num === end!.num + 1 && sameProto(p.proto, start!.proto)) {
      end = p;
      if (i < ports.length - 1) return;
    }
    if (end!.key !== start!.key && !Number.isNaN(start!.num)) {
      const range = `${alias}_PORT_${start!.num}_${start!.proto.toUpperCase()}`;
      env.push(
        `${range}_START=${start!.proto}://${ip}:${start!.num}`,
        `${range}_PORT_START=${start!.num}`,
        `${range}_END=${end!.proto}://${ip}:${end!.num}`,
        `${range}_PORT_END=${end!.num}`,
      );
    }
    start = end = p;
  });
  env.push(`${alias}_NAME=${input.name}`);
  for (const entry of input.childEnv) {
    const cut = entry.indexOf("=");
    if (cut < 0) continue;
    const name = entry.slice(0, cut);
    // what an image build sets says nothing about the linked service
    if (name === "HOME" || name === "PATH") continue;
    env.push(`${alias}_ENV_${name}=${entry.slice(cut + 1)}`);
  }
  return env;
}

/**
 * The names of a link's `/etc/hosts` line: the alias, the child's hostname, and its name when
 * the alias is not that already (`db 0123456789ab` or `alias 0123456789ab db`).
 */
export function linkHostNames(alias: string, childHostname: string, childName: string): string {
  const name = childName.replace(/^\//, "");
  return [alias, childHostname, ...(alias !== name ? [name] : [])].join(" ");
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A running parent's hosts file once the child has a new address: every line whose first name
 * is the alias gets the address (Docker updates the file in place the same way, so whatever
 * else the container wrote there stays).
 */
export function withLinkAddress(hosts: string, alias: string, address: string): string {
  return hosts.replace(new RegExp(`\\S*(\\t${escapeRegExp(alias)})(\\s|\\.)`, "g"), `${address}$1$2`);
}

/** A running parent's hosts file without the lines of a removed link (those whose names are `names`). */
export function withoutLinkLines(hosts: string, names: string): string {
  return hosts
    .split("\n")
    .filter((line) => line.slice(line.indexOf("\t") + 1) !== names || !line.includes("\t"))
    .join("\n");
}
