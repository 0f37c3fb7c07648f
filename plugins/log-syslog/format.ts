/**
 * Why this file: the bytes on the wire are Docker's (its driver's formatters over the srslog
 * library), checked byte for byte against dockerd 20.10:
 *
 *   (default)     <PRI>Jan _2 15:04:05 TAG[PID]: MSG\n                 (srslog's UnixFormatter)
 *   rfc3164       <PRI>Jan _2 15:04:05 HOST TAG[PID]: MSG\n
 *   rfc5424       <PRI>1 2006-01-02T15:04:05Z07:00 HOST TAG PID TAG - MSG\n
 *   rfc5424micro  <PRI>1 2006-01-02T15:04:05.000000Z07:00 HOST TAG PID TAG - MSG\n
 *
 * PRI is facility | severity (6 for stdout, 3 for stderr). Times are local time with Go's
 * layouts. Over tcp+tls the rfc5424 formats are framed by octet counting (RFC 5425,
 * `LEN SP MSG`, the newline counted); everything else is sent as is, newline-terminated.
 */
import type { SyslogFormat, SyslogProto } from "./options.js";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Go's `time.Stamp` in local time: `Jan _2 15:04:05`. */
export function stamp(d: Date): string {
  return `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, " ")} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Go's `Z07:00`: `Z` at UTC, else the local offset. */
function zone(d: Date): string {
  const off = -d.getTimezoneOffset();
  if (off === 0) return "Z";
  const a = Math.abs(off);
  return `${off < 0 ? "-" : "+"}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** Go's `time.RFC3339` in local time; with `micros`, the fraction Docker's rfc5424micro writes. */
export function rfc3339(d: Date, micros?: number): string {
  const base = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${base}${micros === undefined ? "" : "." + pad(micros, 6)}${zone(d)}`;
}

export interface Header {
  priority: number;
  hostname: string;
  tag: string;
  pid: number;
}

/** One message as the format writes it, the newline added, before framing. */
export function formatMessage(format: SyslogFormat, h: Header, line: Buffer, timeNs: bigint): Buffer {
  const d = new Date(Number(timeNs / 1_000_000n));
  let head: string;
  switch (format) {
    case "":
      head = `<${h.priority}>${stamp(d)} ${h.tag}[${h.pid}]: `;
      break;
    case "rfc3164":
      head = `<${h.priority}>${stamp(d)} ${h.hostname} ${h.tag}[${h.pid}]: `;
      break;
    case "rfc5424":
      head = `<${h.priority}>1 ${rfc3339(d)} ${h.hostname} ${h.tag} ${h.pid} ${h.tag} - `;
      break;
    case "rfc5424micro":
      head = `<${h.priority}>1 ${rfc3339(d, Number((timeNs / 1000n) % 1_000_000n))} ${h.hostname} ${h.tag} ${h.pid} ${h.tag} - `;
      break;
  }
  const nl = line.length > 0 && line[line.length - 1] === 0x0a ? [] : [Buffer.from("\n")];
  return Buffer.concat([Buffer.from(head), line, ...nl]);
}

/** RFC 5425 octet counting: only rfc5424 formats over tcp+tls, as Docker frames them. */
export function frame(format: SyslogFormat, proto: SyslogProto, msg: Buffer): Buffer {
  if (proto === "tcp+tls" && (format === "rfc5424" || format === "rfc5424micro")) return Buffer.concat([Buffer.from(`${msg.length} `), msg]);
  return msg;
}
