/**
 * Why this file: the syslog driver's `--log-opt` checks, apart from the code that connects,
 * so that the daemon validates at create without dialing. The rules and the messages are
 * Docker's (checked against dockerd 20.10): an unknown key, an address that is not
 * `proto://address` (a unix path must exist), an unknown facility or format.
 */
import { statSync } from "node:fs";
import { goErrno } from "./go-errors.js";

const KNOWN = new Set([
  "env",
  "env-regex",
  "labels",
  "labels-regex",
  "syslog-address",
  "syslog-facility",
  "syslog-tls-ca-cert",
  "syslog-tls-cert",
  "syslog-tls-key",
  "syslog-tls-skip-verify",
  "tag",
  "syslog-format",
]);

export type SyslogProto = "" | "unix" | "unixgram" | "udp" | "tcp" | "tcp+tls";
export type SyslogFormat = "" | "rfc3164" | "rfc5424" | "rfc5424micro";

export interface SyslogAddress {
  /** "" is the local syslog socket (/dev/log and its fallbacks). */
  proto: SyslogProto;
  /** A path for unix and unixgram, `host:port` for the others ("" for the local socket). */
  address: string;
}

/** The facilities by name, as syslog(3) numbers them (times 8). */
const FACILITIES: Record<string, number> = {
  kern: 0, user: 1, mail: 2, daemon: 3, auth: 4, syslog: 5, lpr: 6, news: 7, uucp: 8, cron: 9, authpriv: 10, ftp: 11,
  local0: 16, local1: 17, local2: 18, local3: 19, local4: 20, local5: 21, local6: 22, local7: 23,
};

const TRANSPORTS = ["tcp", "tcp+tls", "udp", "unix", "unixgram"];
const DEFAULT_PORT = "514";

/** Go's url.Parse, for what a syslog address can be: `scheme://host[:port][/path]`. */
function parseUrl(raw: string): { scheme: string; host: string; path: string } {
  const scheme = raw.slice(0, raw.indexOf("://"));
  const rest = raw.slice(scheme.length + 3);
  const slash = rest.indexOf("/");
  const host = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash);
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    if (close < 0) throw new Error(`parse ${JSON.stringify(raw)}: missing ']' in host`);
    const after = host.slice(close + 1);
    if (after !== "" && !/^:\d*$/.test(after)) throw new Error(`parse ${JSON.stringify(raw)}: invalid port ${JSON.stringify(after)} after host`);
  } else {
    const colon = host.lastIndexOf(":");
    if (colon >= 0 && !/^:\d*$/.test(host.slice(colon))) {
      throw new Error(`parse ${JSON.stringify(raw)}: invalid port ${JSON.stringify(host.slice(colon))} after host`);
    }
  }
  return { scheme, host, path };
}

/** Go's net.SplitHostPort check: a missing port is filled in (514); other faults are errors. */
function withPort(host: string): string {
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    return host.slice(close + 1) === "" ? `${host}:${DEFAULT_PORT}` : host;
  }
  const colons = host.split(":").length - 1;
  if (colons === 0) return `${host}:${DEFAULT_PORT}`;
  if (colons > 1) throw new Error(`address ${host}: too many colons in address`);
  return host;
}

/** `syslog-address` as Docker reads it; a unix path is checked to exist (Go's stat error). */
export function parseAddress(raw: string | undefined): SyslogAddress {
  if (!raw) return { proto: "", address: "" };
  if (!TRANSPORTS.some((p) => raw.startsWith(`${p}://`))) throw new Error(`syslog-address should be in form proto://address, got ${raw}`);
  const url = parseUrl(raw);
  if (url.scheme === "unix" || url.scheme === "unixgram") {
    try {
      statSync(url.path);
    } catch (err) {
      throw new Error(`stat ${url.path}: ${goErrno(err)}`);
    }
    return { proto: url.scheme, address: url.path };
  }
  return { proto: url.scheme as SyslogProto, address: withPort(url.host) };
}

/** The facility's bits of the priority (`daemon` when unset); a name or a number 0-23. */
export function parseFacility(raw: string | undefined): number {
  if (!raw) return FACILITIES.daemon << 3;
  if (Object.hasOwn(FACILITIES, raw)) return FACILITIES[raw] << 3;
  if (/^[+-]?\d+$/.test(raw)) {
    const n = Number(raw);
    if (n >= 0 && n <= 23) return n << 3;
  }
  throw new Error("invalid syslog facility");
}

export function parseFormat(raw: string | undefined): SyslogFormat {
  const format = raw ?? "";
  if (format === "" || format === "rfc3164" || format === "rfc5424" || format === "rfc5424micro") return format;
  throw new Error("Invalid syslog format");
}

/** Docker's ValidateLogOpt for syslog: throws the first fault with Docker's message. */
export function validateSyslogOptions(options: Record<string, string>): void {
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new Error(`unknown log opt '${key}' for syslog log driver`);
  }
  parseAddress(options["syslog-address"]);
  parseFacility(options["syslog-facility"]);
  parseFormat(options["syslog-format"]);
}
