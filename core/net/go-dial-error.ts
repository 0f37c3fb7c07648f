/**
 * A failed connection in the words of Go's net package, which Docker's daemon and so its clients
 * print (`dial tcp 127.0.0.1:5000: connect: connection refused`), instead of Node's (`connect
 * ECONNREFUSED 127.0.0.1:5000`): what users search for, and what scripts and tests match. Only
 * the failures to connect and to resolve a name are put in Go's words; anything else keeps its
 * own message.
 */
import { getSystemErrorMessage } from "node:util";

interface SystemError extends Error {
  code?: string;
  errno?: number;
  syscall?: string;
  address?: string;
  port?: number;
  hostname?: string;
}

/**
 * An errno as Go's syscall package words it (the C library's strerror, first letter lowercase),
 * where libuv's words, which Node's messages carry, differ: `address not available` is Go's
 * `cannot assign requested address`, `host is unreachable` its `no route to host`.
 */
const GO_ERRNO: Record<string, string> = {
  EADDRNOTAVAIL: "cannot assign requested address",
  EHOSTUNREACH: "no route to host",
  EAFNOSUPPORT: "address family not supported by protocol",
  ECONNABORTED: "software caused connection abort",
  ELOOP: "too many levels of symbolic links",
};

/** The errno of a system error in Go's words. */
export function goErrnoText(err: { code?: string; errno?: number; message: string }): string {
  if (err.code && GO_ERRNO[err.code]) return GO_ERRNO[err.code];
  return typeof err.errno === "number" ? getSystemErrorMessage(err.errno) : err.message;
}

/** What the resolver's codes mean, as glibc's gai_strerror (which Go's resolver reports) says it. */
const LOOKUP: Record<string, string> = {
  ENOTFOUND: "no such host",
  EAI_AGAIN: "Temporary failure in name resolution",
  EAI_FAIL: "Non-recoverable failure in name resolution",
};

/** The system error at `err` or under it (undici and fetch wrap it in their own), if any. */
function systemErrorIn(err: unknown): SystemError | undefined {
  for (let e = err as SystemError | undefined, depth = 0; e && depth < 5; e = (e as { cause?: SystemError }).cause, depth++) {
    if (typeof e.syscall === "string" && typeof e.code === "string") return e;
  }
  return undefined;
}

/** Go's words for a connect or lookup failure in `err`'s chain; undefined for any other error. */
export function goDialError(err: unknown): string | undefined {
  const e = systemErrorIn(err);
  if (!e) return undefined;
  if (e.syscall === "connect" && e.address && typeof e.errno === "number") {
    const host = e.address.includes(":") ? `[${e.address}]` : e.address;
    return `dial tcp ${host}:${e.port}: connect: ${goErrnoText(e as SystemError & { message: string })}`;
  }
  if (e.syscall === "getaddrinfo" && e.hostname && LOOKUP[e.code!]) return `dial tcp: lookup ${e.hostname}: ${LOOKUP[e.code!]}`;
  return undefined;
}
