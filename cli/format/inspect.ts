/**
 * The Docker CLI's inspect output, shared by `inspect` and `network inspect`: without a format,
 * the daemon's JSON objects in an array indented by 4 spaces (its bytes, re-indented only);
 * "json", the same on one line; a template, one line per object, run on the object's JSON
 * (a missing key is an error there, as in the Docker CLI's fallback). Objects that cannot be
 * had are reported after the output, one line each, and make the exit status 1.
 */
import { ExitError } from "../command.js";
import { compactJson, indentJson } from "./json-indent.js";
import { parseTemplate, struct, TemplateError, type Template } from "./template.js";

/**
 * The Docker CLI runs an inspect template on the typed object first, where a null field is a
 * nil slice ("[]"), a nil map ("map[]") or a nil pointer ("<nil>"). The JSON does not say which;
 * the API's maps and pointers that can be null (or that this daemon leaves out) are listed
 * here; other nulls are slices.
 */
const NULL_MAPS = new Set(["Volumes", "ExposedPorts", "Labels", "Sysctls", "StorageOpt", "Tmpfs", "DriverOpts", "Options", "Ports", "PortBindings", "Networks", "Data", "Containers", "Peers", "Annotations", "Details", "Status"]);
const NULL_POINTERS = new Set(["Health", "Healthcheck", "IPAMConfig", "Init", "OomKillDisable", "PidsLimit", "MemorySwappiness", "ConfigFrom", "Node", "Metadata", "LogConfig", "RestartPolicy", "Platform", "Descriptor", "Manifests", "UsageData"]);
/** How a null (or absent but typed) field prints; undefined: not one the types are known for. */
function nullText(key: string): string | undefined {
  return NULL_MAPS.has(key) ? "map[]" : NULL_POINTERS.has(key) ? "<nil>" : undefined;
}

/** Sets of the API's types (`map[string]struct{}`): their members print as Go's empty struct, `{}`. */
const STRUCT_SETS = new Set(["ExposedPorts", "Volumes"]);

/** The object as its typed struct would print: the members of a set are empty structs. */
function typedView(v: unknown, key = ""): unknown {
  if (Array.isArray(v)) return v.map((x) => typedView(x));
  if (v === null || typeof v !== "object") return v;
  const entries = Object.entries(v as Record<string, unknown>);
  if (STRUCT_SETS.has(key)) return Object.fromEntries(entries.map(([k]) => [k, struct("struct {}", {})]));
  return Object.fromEntries(entries.map(([k, x]) => [k, typedView(x, k)]));
}

/**
 * As the Docker CLI runs a template: on the typed object (Go's field names), and when that fails
 * on the raw JSON, whose failure is the one reported.
 */
function typedThenRaw(tmpl: Template, object: unknown): string {
  try {
    return tmpl.execute(typedView(object), { missingKeyError: true, nullText, goNames: true });
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    return tmpl.execute(object, { missingKeyError: true, nullText });
  }
}

/**
 * Fetches one object's raw JSON, or throws an Error whose message is what to print. With a
 * typed value beside it (a client-side object, as a context is), templates run on that value.
 */
export type GetRaw = (ref: string) => Promise<string | { raw: string; value: unknown }>;

export async function inspectObjects(refs: readonly string[], format: string, getRaw: GetRaw, out: (text: string) => void): Promise<number> {
  let tmpl: Template | undefined;
  if (format !== "" && format !== "json") {
    try {
      tmpl = parseTemplate(format);
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(64, `template parsing error: ${e.message}`);
      throw e;
    }
  }
  const errors: string[] = [];
  const raws: string[] = [];
  let text = "";
  for (const ref of refs) {
    let got: Awaited<ReturnType<GetRaw>>;
    try {
      got = await getRaw(ref);
    } catch (e) {
      errors.push((e as Error).message);
      continue;
    }
    const raw = typeof got === "string" ? got : got.raw;
    if (!tmpl) {
      raws.push(raw.trim());
      continue;
    }
    try {
      text += (typeof got === "string" ? typedThenRaw(tmpl, JSON.parse(raw)) : tmpl.execute(got.value)) + "\n";
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      errors.push(`template parsing error: ${e.message}`);
    }
  }
  if (tmpl) out(text === "" ? "\n" : text);
  else if (raws.length === 0) out("[]\n");
  else {
    const all = `[${raws.join(",")}]`;
    out(`${format === "json" ? compactJson(all) : indentJson(all)}\n`);
  }
  if (errors.length) throw new ExitError(1, errors.join("\n"));
  return 0;
}
