/**
 * Why this file: errors reach the client as Docker prints them (`dial tcp 127.0.0.1:1:
 * connect: connection refused`), so Node's errno codes are turned into Go's wording here.
 */
const TEXT: Record<string, string> = {
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by peer",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network is unreachable",
  EADDRNOTAVAIL: "cannot assign requested address",
  EPROTOTYPE: "protocol wrong type for socket",
  EPIPE: "broken pipe",
};

/** Go's text for a Node system error (its code), else the error's own message. */
export function goErrno(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return (e.code && TEXT[e.code]) || e.message;
}

/** Go's `dial <net> <addr>: <syscall>: <text>` for a failed connection. */
export function dialError(net: string, address: string, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "ENOTFOUND" || e.code === "EAI_AGAIN") return new Error(`dial ${net} ${address}: lookup ${(e as { hostname?: string }).hostname ?? address}: no such host`);
  if (!e.code || !TEXT[e.code]) return new Error(`dial ${net} ${address}: ${e.message}`);
  return new Error(`dial ${net} ${address}: ${e.syscall ?? "connect"}: ${TEXT[e.code]}`);
}
