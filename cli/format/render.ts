/**
 * The Docker CLI's list output (its formatter.Context): a `--format` is "table" (aligned columns
 * under a header made from the same template), "json" (`{{json .}}` a line), "raw" where a
 * command has one, or a Go template; literal `\t` and `\n` in it become a tab and a newline.
 * Each item renders to one line (or block), then a table is aligned as a whole.
 */
import { alignColumns } from "./table.js";
import { headerContext, parseTemplate, TemplateError, type GoStruct, type TypedNull } from "./template.js";

export interface ListFormat {
  /** The template, with "table" or not in front. */
  format: string;
  /** The field → column name map for the header row (a TypedNull: a field the CLI's header map lacks). */
  headers: Record<string, string | TypedNull>;
  /** The context's Go type, for errors ("*formatter.ContainerContext"). */
  typeName: string;
}

/** Renders `items` as the CLI would; throws TemplateError with the CLI's message. */
export function renderList(spec: ListFormat, items: GoStruct[]): string {
  const isTable = spec.format.startsWith("table");
  let body = isTable ? spec.format.slice("table".length) : spec.format === "json" ? "{{json .}}" : spec.format;
  body = body.replace(/^ +| +$/g, "").replace(/\\t/g, "\t").replace(/\\n/g, "\n");
  const tmpl = parseTemplateWrapped(body);
  let text = "";
  for (const item of items) {
    try {
      text += tmpl.execute(item) + "\n";
    } catch (e) {
      if (e instanceof TemplateError) throw new TemplateError(`template parsing error: ${e.message}`);
      throw e;
    }
  }
  if (!isTable) return text;
  let header = "";
  try {
    header = tmpl.execute(headerContext(spec.typeName, spec.headers), { header: true });
  } catch {
    // Go ignores a failing header (it writes what it had)
  }
  return alignColumns(`${header}\n${text}`);
}

/**
 * What renderList makes of "table {{.A}}\t{{.B}}..." when every field is a string, without the
 * template engine: for a list's default table (`engine ps`), whose start is measured and whose
 * first template parse and run take a few milliseconds.
 */
export function renderTable<K extends string>(columns: readonly K[], headers: Readonly<Record<string, string>>, rows: readonly Readonly<Record<K, () => string>>[]): string {
  const lines = [columns.map((c) => headers[c]).join("\t"), ...rows.map((row) => columns.map((c) => row[c]()).join("\t"))];
  return alignColumns(`${lines.join("\n")}\n`);
}

function parseTemplateWrapped(body: string) {
  try {
    return parseTemplate(body);
  } catch (e) {
    if (e instanceof TemplateError) throw new TemplateError(`template parsing error: ${e.message}`);
    throw e;
  }
}

/** The truncated form of an ID: 12 characters of its hex (after "sha256:"). */
export function truncateId(id: string): string {
  const i = id.indexOf(":");
  const hex = i >= 0 ? id.slice(i + 1) : id;
  return hex.length > 12 ? hex.slice(0, 12) : hex;
}

/** The CLI's Ellipsis: `maxDisplayWidth` columns at most, the last one "…" when cut. */
export function ellipsis(s: string, maxWidth: number): string {
  const chars = [...s];
  if (chars.length <= maxWidth) return s;
  if (maxWidth <= 0) return "";
  return chars.slice(0, maxWidth - 1).join("") + "…";
}

/** Go's strconv.Quote: a double-quoted string with Go's escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\x07") out += "\\a";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (ch === "\v") out += "\\v";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return out + '"';
}
