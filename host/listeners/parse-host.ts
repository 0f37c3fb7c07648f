/**
 * `-H` / `--host` values, in every form the spec allows:
 *   unix://PATH            a unix socket (empty path: the default socket)
 *   tcp://[HOST][:PORT][/PATH]   no host: 127.0.0.1; no port: 2376 with TLS, 2375 without;
 *                          PATH is a prefix every request carries and the daemon strips
 *   HOST:  HOST:PORT  :PORT     shorthands for tcp://
 *   fd://  fd://N          sockets passed by socket activation (all, or the one at fd N)
 *   ""                     as if -H were not given: the default unix socket
 */
import { errors } from "../../core/errors.js";

export const DEFAULT_UNIX_SOCKET = "/var/run/engine.sock";

export type ListenAddress =
  | { proto: "unix"; path: string }
  | { proto: "tcp"; host: string; port: number; prefix: string }
  | { proto: "fd"; fd?: number };

export function parseHost(value: string, tls: boolean): ListenAddress {
  const text = value.trim();
  if (text === "") return { proto: "unix", path: DEFAULT_UNIX_SOCKET };
  const scheme = /^([a-z0-9+.-]*):\/\//i.exec(text);
  if (!scheme) return parseTcp(text, tls, value);
  const rest = text.slice(scheme[0].length);
  switch (scheme[1].toLowerCase()) {
    case "unix":
      return { proto: "unix", path: rest === "" ? DEFAULT_UNIX_SOCKET : rest };
    case "tcp":
      return parseTcp(rest, tls, value);
    case "fd":
      if (rest === "") return { proto: "fd" };
      if (!/^\d+$/.test(rest)) throw errors.listenerInvalidHost(value, "fd:// takes a file descriptor number");
      return { proto: "fd", fd: Number(rest) };
    default:
      throw errors.listenerInvalidHost(value, `unsupported scheme "${scheme[1]}://"; use unix://, tcp:// or fd://`);
  }
}

function parseTcp(rest: string, tls: boolean, original: string): ListenAddress {
  const slash = rest.indexOf("/");
  const hostPort = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? "" : rest.slice(slash).replace(/\/+$/, "");
  let host: string;
  let portText: string;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(hostPort);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2] ?? "";
  } else {
    const colon = hostPort.lastIndexOf(":");
    if (colon >= 0 && hostPort.indexOf(":") !== colon) {
      throw errors.listenerInvalidHost(original, "an IPv6 address must be in brackets: tcp://[::1]:2375");
    }
    host = colon < 0 ? hostPort : hostPort.slice(0, colon);
    portText = colon < 0 ? "" : hostPort.slice(colon + 1);
  }
  if (host === "") host = "127.0.0.1";
  let port = tls ? 2376 : 2375;
  if (portText !== "") {
    if (!/^\d+$/.test(portText) || Number(portText) > 65535) {
      throw errors.listenerInvalidHost(original, `invalid port "${portText}"`);
    }
    port = Number(portText);
  }
  return { proto: "tcp", host, port, prefix };
}

/** The address as `-H` would spell it, for logs and errors. */
export function formatAddress(addr: ListenAddress): string {
  switch (addr.proto) {
    case "unix":
      return `unix://${addr.path}`;
    case "tcp":
      return `tcp://${addr.host.includes(":") ? `[${addr.host}]` : addr.host}:${addr.port}${addr.prefix}`;
    case "fd":
      return addr.fd === undefined ? "fd://" : `fd://${addr.fd}`;
  }
}
