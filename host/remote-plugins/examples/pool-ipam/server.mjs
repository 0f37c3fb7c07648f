#!/usr/bin/env node
/**
 * An IPAM plugin as a server of its own: it hands out networks' address pools and containers'
 * addresses, which the daemon then uses instead of its own address management. Plain Node.js,
 * no dependencies, written to be copied. It speaks the IPAM plugin protocol (libnetwork's
 * "remote" IPAM, which plugins written for Docker's daemon speak), JSON over HTTP on a unix socket.
 *
 *   node server.mjs [--socket PATH] [--record FILE] [--pool CIDR] [--pool6 CIDR] [--size N] [--size6 N]
 *
 * The default socket is /run/engine/plugins/pool-ipam.sock, where engined finds an IPAM driver
 * named `pool-ipam` (`docker network create --ipam-driver pool-ipam net1`). A network that names
 * no subnet gets the next free /24 (`--size`) of 10.160.0.0/16 (`--pool`), or /64 (`--size6`) of
 * fd60:1::/48 (`--pool6`) for IPv6; one that names a subnet gets it, unless another network of the
 * plugin has an overlapping one. Addresses are handed out in order, the first free one after the
 * last handed out (a released one is not handed out again at once). `--record FILE` appends each
 * call (method, body and answer) as a JSON line. The state is in memory: a restarted plugin
 * starts empty (see README.md).
 */
import { createServer } from "node:http";
import { appendFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { isIPv4, isIPv6 } from "node:net";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    socket: { type: "string" },
    record: { type: "string" },
    pool: { type: "string", default: "10.160.0.0/16" },
    pool6: { type: "string", default: "fd60:1::/48" },
    size: { type: "string", default: "24" },
    size6: { type: "string", default: "64" },
  },
});

const ADDRESS_SPACES = { LocalDefaultAddressSpace: "pool-ipam-local", GlobalDefaultAddressSpace: "pool-ipam-global" };
/** What the daemon asks for when it wants a network's gateway. */
const GATEWAY_REQUEST = ["RequestAddressType", "com.docker.network.gateway"];

// --- addresses as BigInts -------------------------------------------------------------------

function parseAddress(text) {
  if (isIPv4(text)) return { family: 4, value: text.split(".").reduce((v, b) => (v << 8n) | BigInt(b), 0n) };
  if (!isIPv6(text) || text.includes(".")) throw new Error(`not an IP address: ${text}`);
  const [head, tail] = text.split("::");
  const groups = (s) => (s ? s.split(":") : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = tail === undefined ? groups(head) : [...groups(head), ...Array(missing).fill("0"), ...groups(tail)];
  return { family: 6, value: all.reduce((v, g) => (v << 16n) | BigInt(`0x${g}`), 0n) };
}

function formatAddress(family, value) {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join(".");
  const groups = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  // the longest run of zero groups written as "::"
  let best = [-1, 0];
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best[1]) best = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  if (best[1] < 2) return groups.join(":");
  return `${groups.slice(0, best[0]).join(":")}::${groups.slice(best[0] + best[1]).join(":")}`;
}

/** A CIDR as { family, base, bits, size }; its base is the network address. */
function parseCidr(text) {
  const [address, length] = String(text).split("/");
  const { family, value } = parseAddress(address);
  const width = family === 4 ? 32 : 128;
  const bits = Number(length);
  if (!Number.isInteger(bits) || bits < 0 || bits > width) throw new Error(`invalid CIDR: ${text}`);
  const host = width - bits;
  const base = (value >> BigInt(host)) << BigInt(host);
  return { family, base, bits, size: 1n << BigInt(host), text: `${formatAddress(family, base)}/${bits}` };
}

const contains = (cidr, family, value) => cidr.family === family && value >= cidr.base && value < cidr.base + cidr.size;
const overlaps = (a, b) => a.family === b.family && a.base < b.base + b.size && b.base < a.base + a.size;

// --- the plugin's state ---------------------------------------------------------------------

/** By pool id: { cidr, range (where container addresses come from), taken: Set<bigint>, next, users }. */
const pools = new Map();

function poolOf(id) {
  const pool = pools.get(id);
  if (!pool) throw new Error(`unknown pool ${JSON.stringify(id)}`);
  return pool;
}

/** The next free subnet of `--pool` (`--pool6`) that no pool of ours overlaps. */
function freeSubnet(v6) {
  const from = parseCidr(v6 ? args.pool6 : args.pool);
  const bits = Number(v6 ? args.size6 : args.size);
  const step = 1n << BigInt((from.family === 4 ? 32 : 128) - bits);
  for (let base = from.base, i = 0; base < from.base + from.size && i < 65536; base += step, i++) {
    const candidate = parseCidr(`${formatAddress(from.family, base)}/${bits}`);
    if (![...pools.values()].some((p) => overlaps(p.cidr, candidate))) return candidate;
  }
  throw new Error(`no free /${bits} left in ${from.text}`);
}

function requestPool({ AddressSpace, Pool, SubPool, Options, V6 }) {
  if (AddressSpace !== ADDRESS_SPACES.LocalDefaultAddressSpace && AddressSpace !== ADDRESS_SPACES.GlobalDefaultAddressSpace) throw new Error(`unknown address space ${JSON.stringify(AddressSpace)}`);
  if (!Pool && SubPool) throw new Error("a sub-pool needs a pool");
  const cidr = Pool ? parseCidr(Pool) : freeSubnet(!!V6);
  const range = SubPool ? parseCidr(SubPool) : cidr;
  if (range.family !== cidr.family || range.base < cidr.base || range.base + range.size > cidr.base + cidr.size) throw new Error(`sub-pool ${SubPool} is not inside pool ${cidr.text}`);
  const id = `${AddressSpace}/${cidr.text}${SubPool ? `/${range.text}` : ""}`;
  // the same request again: the same pool, one more user (the protocol asks for a reference count)
  const known = pools.get(id);
  if (known) {
    known.users++;
    return { PoolID: id, Pool: cidr.text, Data: {} };
  }
  const other = [...pools.values()].find((p) => overlaps(p.cidr, cidr) && p.cidr.text !== cidr.text);
  if (other) throw new Error(`pool ${cidr.text} overlaps with pool ${other.cidr.text}`);
  pools.set(id, { cidr, range, taken: new Set(), next: range.base, users: 1, options: Options ?? {} });
  return { PoolID: id, Pool: cidr.text, Data: {} };
}

function releasePool({ PoolID }) {
  const pool = poolOf(PoolID);
  if (--pool.users === 0) pools.delete(PoolID);
  return {};
}

function requestAddress({ PoolID, Address, Options }) {
  const pool = poolOf(PoolID);
  const { family, base, size } = pool.cidr;
  const answer = (value) => {
    pool.taken.add(value);
    return { Address: `${formatAddress(family, value)}/${pool.cidr.bits}`, Data: {} };
  };
  // (IPv4's network and broadcast addresses are never handed out)
  const usable = (value) => !(family === 4 && pool.cidr.bits < 31 && (value === base || value === base + size - 1n)) && !(family === 6 && value === base);
  if (Address) {
    const { family: f, value } = parseAddress(Address);
    if (!contains(pool.cidr, f, value) || !usable(value)) throw new Error(`address ${Address} is not in pool ${pool.cidr.text}`);
    if (pool.taken.has(value)) throw new Error(`address ${Address} is already in use`);
    return answer(value);
  }
  const gateway = Options?.[GATEWAY_REQUEST[0]] === GATEWAY_REQUEST[1];
  // a gateway without an address asked for: the pool's first host; others from the range, in turn
  const { base: from, size: count } = gateway ? pool.cidr : pool.range;
  const limit = count < 65536n ? count : 65536n;
  for (let i = 0n; i < limit; i++) {
    const value = gateway ? from + i : from + ((pool.next - from + i) % count);
    if (usable(value) && !pool.taken.has(value)) {
      if (!gateway) pool.next = value + 1n;
      return answer(value);
    }
  }
  throw new Error(`no available addresses on pool ${pool.cidr.text}`);
}

function releaseAddress({ PoolID, Address }) {
  const pool = poolOf(PoolID);
  pool.taken.delete(parseAddress(Address).value);
  return {};
}

const handlers = {
  "/Plugin.Activate": () => ({ Implements: ["IpamDriver"] }),
  "/IpamDriver.GetCapabilities": () => ({ RequiresMACAddress: false }),
  "/IpamDriver.GetDefaultAddressSpaces": () => ADDRESS_SPACES,
  "/IpamDriver.RequestPool": requestPool,
  "/IpamDriver.ReleasePool": releasePool,
  "/IpamDriver.RequestAddress": requestAddress,
  "/IpamDriver.ReleaseAddress": releaseAddress,
};

// --- the protocol ----------------------------------------------------------------------------

const MEDIA_TYPE = "application/vnd.docker.plugins.v1.2+json";

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const handler = handlers[request.url];
    let status = 200;
    let answer;
    let body = {};
    if (request.method !== "POST" || !handler) {
      status = 404;
      answer = { Err: `unknown method ${request.method} ${request.url}` };
    } else {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        body = (text && JSON.parse(text)) || {};
        answer = handler(body);
      } catch (err) {
        // an IPAM answer's failure is its `Error`; the daemon shows it as "remote: <Error>"
        answer = { Error: `pool-ipam: ${err.message}` };
      }
    }
    if (args.record) appendFileSync(args.record, JSON.stringify({ method: request.url.slice(1), body, answer }) + "\n");
    response.writeHead(status, { "content-type": MEDIA_TYPE });
    response.end(JSON.stringify(answer));
  });
});

const socketPath = args.socket ?? "/run/engine/plugins/pool-ipam.sock";
mkdirSync(dirname(socketPath), { recursive: true });
rmSync(socketPath, { force: true });
server.listen(socketPath, () => process.stdout.write(`pool-ipam listening on ${socketPath}\n`));

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    rmSync(socketPath, { force: true });
    process.exit(0);
  });
}
