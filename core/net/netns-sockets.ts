/**
 * Sockets bound inside another network namespace (a container's sandbox) and served by the
 * daemon: the name server of a network whose links a plugin of another process makes, which the
 * daemon can reach no other way, answers on 127.0.0.11 in the container's own namespace, as
 * Docker's resolver does (a thread of dockerd enters the namespace to bind it).
 *
 * The main thread enters the namespace (setns), makes and binds the two sockets, and comes back,
 * all in one synchronous stretch: no other JavaScript runs meanwhile, and libuv's other threads
 * keep their own namespace. A socket keeps the namespace it was made in, so Node then serves the
 * descriptors (`dgram` bind and `net` listen take an `fd`) from the daemon's namespace.
 */
import { closeSync, openSync } from "node:fs";
import { getSystemErrorName } from "node:util";
import { libc } from "../libc.js";

type Fn = (...args: unknown[]) => number;
let made: { errno: () => number; setns: Fn; socket: Fn; bind: Fn; close: Fn } | undefined;

/** The four calls, declared once. */
function calls(): NonNullable<typeof made> {
  if (made) return made;
  const { koffi, lib } = libc();
  const declare = (prototype: string) => lib.func(prototype) as Fn;
  made = { errno: () => koffi.errno(), setns: declare("int setns(int fd, int nstype)"), socket: declare("int socket(int domain, int type, int protocol)"), bind: declare("int bind(int fd, const void *addr, uint32_t len)"), close: declare("int close(int fd)") };
  return made;
}

const CLONE_NEWNET = 0x40000000;
const AF_INET = 2;
const SOCK_STREAM = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;

/** A `sockaddr_in` of an IPv4 address and port. */
function sockaddr(address: string, port: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt16LE(AF_INET, 0);
  b.writeUInt16BE(port, 2);
  Buffer.from(address.split(".").map(Number)).copy(b, 4);
  return b;
}

/**
 * A UDP and a TCP socket bound to `address:port` (IPv4) in the namespace bound at `nsPath`; the
 * caller owns the descriptors (Node's sockets take them over). Throws naming the failed call.
 */
export function bindInNetns(nsPath: string, address: string, port: number): { udp: number; tcp: number } {
  const c = calls();
  const own = openSync("/proc/thread-self/ns/net", "r");
  let target: number | undefined;
  const made: number[] = [];
  try {
    target = openSync(nsPath, "r");
    if (c.setns(target, CLONE_NEWNET) !== 0) throw new Error(`setns ${nsPath}: ${getSystemErrorName(-c.errno())}`);
    let failure: Error | undefined;
    try {
      for (const type of [SOCK_DGRAM, SOCK_STREAM]) {
        const fd = c.socket(AF_INET, type | SOCK_CLOEXEC, 0);
        if (fd < 0) throw new Error(`socket: ${getSystemErrorName(-c.errno())}`);
        made.push(fd);
        if (c.bind(fd, sockaddr(address, port), 16) !== 0) throw new Error(`bind ${address}:${port}: ${getSystemErrorName(-c.errno())}`);
      }
    } catch (err) {
      failure = err as Error;
    } finally {
      // back at once, whatever happened: the daemon's main thread must never stay in there
      if (c.setns(own, CLONE_NEWNET) !== 0) throw new Error(`cannot return to the daemon's network namespace: ${getSystemErrorName(-c.errno())}`);
    }
    if (failure) throw failure;
    return { udp: made[0], tcp: made[1] };
  } catch (err) {
    for (const fd of made) c.close(fd);
    throw err;
  } finally {
    closeSync(own);
    if (target !== undefined) closeSync(target);
  }
}
