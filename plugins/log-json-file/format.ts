/**
 * Why this file: the on-disk line format is Docker's, byte for byte, and both the writer and
 * the reader depend on it; keeping the encoder, the decoder, the RFC3339Nano times and the
 * `attrs` in one place keeps the two sides in step.
 *
 * A line of the file: `{"log":"hi\n","stream":"stdout","attrs":{...},"time":"<RFC3339Nano>"}`
 * with the keys in the order Docker's encoder writes them, `attrs` only when options select
 * some, and the time as Go's `time.RFC3339Nano` writes it (UTC, trailing zeros of the fraction
 * dropped).
 */
import { dateToNs, formatRFC3339Nano, parseRFC3339Nano } from "../../core/rfc3339-nano.js";
import type { LoggerContext, LogMessage, LogMessageIn } from "../../core/contracts/log.js";
import { TAG_FIELD_RE, type JsonFileConfig } from "./options.js";

// --- attrs -------------------------------------------------------------------------------------

/** Docker's `Info.ExtraAttributes` plus json-file's `tag`: what goes into `attrs`. */
export function extraAttributes(ctx: LoggerContext, cfg: JsonFileConfig): Record<string, string> {
  const extra: Record<string, string> = {};
  for (const key of cfg.labels) if (Object.hasOwn(ctx.labels, key)) extra[key] = ctx.labels[key];
  if (cfg.labelsRegex) for (const [k, v] of Object.entries(ctx.labels)) if (cfg.labelsRegex.test(k)) extra[k] = v;
  const envMap = new Map<string, string>();
  for (const e of ctx.env) {
    const eq = e.indexOf("=");
    if (eq >= 0) envMap.set(e.slice(0, eq), e.slice(eq + 1));
  }
  for (const key of cfg.env) if (envMap.has(key)) extra[key] = envMap.get(key)!;
  if (cfg.envRegex) for (const [k, v] of envMap) if (cfg.envRegex.test(k)) extra[k] = v;
  if (cfg.tag) extra.tag = expandTag(cfg.tag, ctx);
  return extra;
}

function expandTag(template: string, ctx: LoggerContext): string {
  const imageHex = ctx.imageId.includes(":") ? ctx.imageId.slice(ctx.imageId.indexOf(":") + 1) : ctx.imageId;
  const fields: Record<string, string> = {
    ID: ctx.containerId.slice(0, 12),
    FullID: ctx.containerId,
    Name: ctx.containerName.replace(/^\//, ""),
    ImageID: imageHex.slice(0, 12),
    ImageFullID: ctx.imageId,
    ImageName: ctx.imageName,
    DaemonName: "engine",
  };
  return template.replace(TAG_FIELD_RE, (_, field: string) => fields[field] ?? "");
}

/** The `attrs` object as Go writes a map (keys sorted), or "" when there are none. */
export function encodeAttrs(attrs: Record<string, string>): string {
  const keys = Object.keys(attrs).sort();
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${encodeJsonString(k)}:${encodeJsonString(attrs[k])}`).join(",")}}`;
}

// --- strings and times -------------------------------------------------------------------------

const HEX = "0123456789abcdef";

/** A JSON string as Go's encoder writes it (HTML characters and U+2028/9 escaped as \u00XX). */
export function encodeJsonString(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | undefined;
    if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = "\\\\";
    else if (c === 0x0a) esc = "\\n";
    else if (c === 0x0d) esc = "\\r";
    else if (c === 0x09) esc = "\\t";
    else if (c < 0x20 || c === 0x3c || c === 0x3e || c === 0x26) esc = "\\u00" + HEX[c >> 4] + HEX[c & 15];
    else if (c === 0x2028 || c === 0x2029) esc = c === 0x2028 ? "\\u2028" : "\\u2029";
    if (esc !== undefined) {
      out += s.slice(start, i) + esc;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

export { dateToNs, formatRFC3339Nano, parseRFC3339Nano };

// --- lines -------------------------------------------------------------------------------------

/** One line of the file, newline included. `attrsJson` is the encoded attrs object or "". */
export function encodeEntry(msg: LogMessageIn, attrsJson = ""): Buffer {
  return Buffer.from(encodeEntryText(msg, attrsJson), "utf8");
}

/** The same line as text; `time` is the message's time already formatted (a writer caches it). */
export function encodeEntryText(msg: LogMessageIn, attrsJson = "", time = formatRFC3339Nano(msg.timeNs ?? dateToNs(msg.time))): string {
  const text = msg.line.toString("utf8") + (msg.partial ? "" : "\n");
  const log = text === "" ? "" : `"log":${encodeJsonString(text)},`;
  const attrs = attrsJson ? `,"attrs":${attrsJson}` : "";
  return `{${log}"stream":"${msg.stream}"${attrs},"time":"${time}"}\n`;
}

/** The stored line as a message, or undefined for a line that is not one. */
export function decodeEntry(raw: Buffer | string): LogMessage | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(raw.toString());
  } catch {
    return undefined;
  }
  if (!obj || typeof obj !== "object") return undefined;
  const o = obj as { log?: unknown; stream?: unknown; time?: unknown; attrs?: unknown };
  if (o.stream !== "stdout" && o.stream !== "stderr") return undefined;
  const ns = typeof o.time === "string" ? parseRFC3339Nano(o.time) : undefined;
  if (ns === undefined) return undefined;
  let log = typeof o.log === "string" ? o.log : "";
  const partial = !log.endsWith("\n");
  if (!partial) log = log.slice(0, -1);
  const msg: LogMessage = {
    line: Buffer.from(log, "utf8"),
    stream: o.stream,
    time: new Date(Number(ns / 1_000_000n)),
    timeNs: ns,
    partial,
  };
  if (o.attrs && typeof o.attrs === "object") msg.attrs = o.attrs as Record<string, string>;
  return msg;
}
