/**
 * Go's text/template, the part the Docker CLI's `--format` uses: text and `{{ }}` actions with
 * `{{-`/`-}}` trimming, fields (`.A.B`), methods with arguments (`.Label "k"`), variables
 * (`$`, `$x := ...`), pipelines (`|`), parentheses, `if`/`else if`/`else`/`range`/`with`/`end`,
 * and the functions the CLI adds (json, join, split, title, lower, upper, pad, truncate) with
 * Go's own (index, len, printf, print, println, eq, ne, lt, le, gt, ge, and, or, not).
 * Errors read as Go's do ("template: :1:2: executing "" at <.Foo>: ...").
 *
 * Values: plain JSON data (maps, lists, strings, numbers) and "structs": objects made with
 * `struct()`, whose members are the fields and methods a template may name, as the Docker
 * CLI's formatter contexts are.
 */

import { Parser, TemplateError, type Arg, type Node, type Pipe } from "./template-parse.js";

export { TemplateError };

const STRUCT = Symbol("struct");

/** A value whose members are fields and methods (a Go struct); `typeName` is for errors. */
export interface GoStruct {
  [STRUCT]: string;
  [member: string]: unknown;
}

export function struct<T extends object>(typeName: string, members: T): T & GoStruct {
  return Object.assign(Object.create(null), members, { [STRUCT]: typeName }) as T & GoStruct;
}

const PLAIN = Symbol("plain");

/**
 * A struct without a MarshalJSON of its own (the API's types, `*events.Message`): `json` writes
 * it with the CLI's encoder, whose HTML escaping is off.
 */
export function plainStruct<T extends object>(typeName: string, members: T): T & GoStruct {
  return Object.assign(struct(typeName, members), { [PLAIN]: true });
}

function isStruct(v: unknown): v is GoStruct {
  return typeof v === "object" && v !== null && STRUCT in v;
}

/** A Go map value (map[string]string from a struct), printed and marshalled with sorted keys. */
export class GoMap {
  constructor(readonly entries: Record<string, unknown>) {}
}

// ---- values ----

const NO_VALUE = Symbol("no value");

/** Go's `%v`. */
function goString(v: unknown): string {
  if (v === NO_VALUE || v === undefined) return "<no value>";
  if (v instanceof TypedNull) return v.text;
  if (v === null) return "<nil>";
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(goString).join(" ")}]`;
  if (v instanceof GoMap) return `map[${Object.keys(v.entries).sort().map((k) => `${k}:${goString(v.entries[k])}`).join(" ")}]`;
  if (isStruct(v)) {
    if (typeof v.String === "function") return String((v.String as () => unknown)());
    return `{${Object.keys(v).filter((k) => typeof v[k] !== "function").map((k) => goString(v[k])).join(" ")}}`;
  }
  if (typeof v === "object") return `map[${Object.keys(v).sort().map((k) => `${k}:${goString((v as Record<string, unknown>)[k])}`).join(" ")}]`;
  return String(v);
}

/**
 * What a struct's own MarshalJSON wrote (a struct's toJSON may return one): `json` writes it as
 * it is. The CLI's types that marshal themselves with json.Marshal (a context's DockerContext)
 * escape HTML characters even inside an encoder that does not.
 */
export class MarshaledJson {
  constructor(readonly text: string) {}
}

const MARSHALED = "marshaled-json:";
/** The texts of the MarshaledJson values of the goJson call under way, by placeholder number. */
let marshaled: string[] = [];

/** What `json` makes of a value: structs marshal their fields and argument-less methods. */
function toJsonValue(v: unknown): unknown {
  if (v === NO_VALUE || v === undefined || v instanceof TypedNull) return null;
  // an int64 beyond 2^53 (an event's timeNano) is kept as a bigint and written digit for digit
  if (typeof v === "bigint") return (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(String(v));
  // JSON a struct's own MarshalJSON wrote: a placeholder goJson puts the bytes back in for
  if (v instanceof MarshaledJson) return `\u0000${MARSHALED}${marshaled.push(v.text) - 1}\u0000`;
  if (v instanceof GoMap) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v.entries).sort()) out[k] = toJsonValue(v.entries[k]);
    return out;
  }
  if (isStruct(v)) {
    if (typeof v.toJSON === "function") return toJsonValue((v.toJSON as () => unknown)());
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const m = v[k];
      if (typeof m === "function") {
        if (m.length === 0 && /^[A-Z]/.test(k)) out[k] = toJsonValue((m as () => unknown).call(v));
      } else if (/^[A-Z]/.test(k)) out[k] = toJsonValue(m);
    }
    return out;
  }
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJsonValue(x);
    return out;
  }
  return v;
}

/** Go's encoding/json without HTML escaping, as the CLI's `json` function writes. */
export function goJson(v: unknown): string {
  marshaled = [];
  let text = (JSON.stringify(toJsonValue(v)) ?? "null").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  if (marshaled.length) text = text.replace(new RegExp(`"\\\\u0000${MARSHALED}(\\d+)\\\\u0000"`, "g"), (_m, i: string) => marshaled[Number(i)]);
  // a struct marshals itself with json.Marshal, which escapes HTML characters; the CLI's
  // encoder (HTML escaping off) keeps what a Marshaler wrote
  if (isStruct(v) && !(PLAIN in v)) text = text.replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
  return text;
}

function truth(v: unknown): boolean {
  if (v === NO_VALUE || v === undefined || v === null || v instanceof TypedNull) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof GoMap) return Object.keys(v.entries).length > 0;
  if (isStruct(v)) return true;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

type Fn = (...args: unknown[]) => unknown;

function typeName(v: unknown): string {
  if (isStruct(v)) return v[STRUCT];
  if (v === null || v === NO_VALUE || v === undefined) return "interface {}";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float64";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

function compare(name: string, a: unknown, b: unknown): number {
  const norm = (x: unknown) => (x === NO_VALUE || x === undefined ? null : x);
  const [x, y] = [norm(a), norm(b)];
  if (typeof x === "number" && typeof y === "number") return x - y;
  if (typeof x === "string" && typeof y === "string") return x < y ? -1 : x > y ? 1 : 0;
  if (name === "eq" || name === "ne") return x === y ? 0 : 1;
  throw new TemplateError(`error calling ${name}: incompatible types for comparison`);
}

function sprintf(format: string, args: unknown[]): string {
  let k = 0;
  return format.replace(/%([-+# 0]*)(\d*)(?:\.(\d+))?([vsdqtfgx%])/g, (_m, flags: string, width: string, prec: string | undefined, verb: string) => {
    if (verb === "%") return "%";
    if (k >= args.length) return `%!${verb}(MISSING)`;
    const a = args[k++];
    let s: string;
    if (verb === "q") s = JSON.stringify(goString(a));
    else if (verb === "d") s = typeof a === "number" ? String(Math.trunc(a)) : `%!d(${typeName(a)}=${goString(a)})`;
    else if (verb === "f") s = typeof a === "number" ? a.toFixed(prec ? Number(prec) : 6) : `%!f(${typeName(a)}=${goString(a)})`;
    else if (verb === "x") s = typeof a === "number" ? a.toString(16) : Buffer.from(goString(a)).toString("hex");
    else s = goString(a);
    if (verb === "s" && prec) s = [...s].slice(0, Number(prec)).join("");
    const w = Number(width || 0);
    if (s.length < w) s = flags.includes("-") ? s.padEnd(w) : s.padStart(w, flags.includes("0") && verb !== "s" ? "0" : " ");
    return s;
  });
}

const BASIC: Record<string, Fn> = {
  json: (v) => goJson(v),
  split: (s, sep) => String(s).split(String(sep)),
  join: (list, sep) => {
    if (!Array.isArray(list)) throw new TemplateError(`wrong type for value; expected []string; got ${typeName(list)}`);
    return list.map(goString).join(String(sep));
  },
  title: (s) => String(goString(s)).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, a: string, b: string) => a + b.toUpperCase()),
  lower: (s) => goString(s).toLowerCase(),
  upper: (s) => goString(s).toUpperCase(),
  pad: (s, prefix, suffix) => (goString(s) === "" ? "" : " ".repeat(Number(prefix)) + goString(s) + " ".repeat(Number(suffix))),
  truncate: (s, n) => {
    const text = goString(s);
    return Buffer.byteLength(text) < Number(n) ? text : Buffer.from(text).subarray(0, Number(n)).toString();
  },
  index: (v, ...keys) => {
    let cur = v;
    for (const key of keys) {
      if (cur instanceof GoMap) cur = cur.entries[String(key)] ?? "";
      else if (Array.isArray(cur)) {
        if (typeof key !== "number" || key < 0 || key >= cur.length) throw new TemplateError(`error calling index: index out of range: ${goString(key)}`);
        cur = cur[key];
      } else if (cur && typeof cur === "object" && !isStruct(cur)) {
        const rec = cur as Record<string, unknown>;
        cur = Object.prototype.hasOwnProperty.call(rec, String(key)) ? rec[String(key)] : NO_VALUE;
      } else if (cur === null || cur === NO_VALUE || cur === undefined) {
        throw new TemplateError("error calling index: index of untyped nil");
      } else throw new TemplateError(`error calling index: can't index item of type ${typeName(cur)}`);
    }
    return cur;
  },
  len: (v) => {
    if (typeof v === "string") return Buffer.byteLength(v);
    if (Array.isArray(v)) return v.length;
    if (v instanceof GoMap) return Object.keys(v.entries).length;
    if (v && typeof v === "object") return Object.keys(v).length;
    throw new TemplateError(`error calling len: len of type ${typeName(v)}`);
  },
  printf: (format, ...args) => sprintf(String(format), args),
  print: (...args) => args.map(goString).join(""),
  println: (...args) => `${args.map(goString).join(" ")}\n`,
  eq: (a, ...bs) => bs.some((b) => compare("eq", a, b) === 0),
  ne: (a, b) => compare("ne", a, b) !== 0,
  lt: (a, b) => compare("lt", a, b) < 0,
  le: (a, b) => compare("le", a, b) <= 0,
  gt: (a, b) => compare("gt", a, b) > 0,
  ge: (a, b) => compare("ge", a, b) >= 0,
  not: (v) => !truth(v),
  and: (...vs) => vs.find((v) => !truth(v)) ?? vs[vs.length - 1],
  or: (...vs) => vs.find((v) => truth(v)) ?? vs[vs.length - 1],
  urlquery: (...vs) => encodeURIComponent(vs.map(goString).join("")),
};

/** The functions a table's header row is made with: they hand the column's name through. */
const HEADER: Record<string, Fn> = {
  json: (v) => v,
  split: (v) => v,
  join: (v) => v,
  title: (v) => v,
  lower: (v) => v,
  upper: (v) => v,
  truncate: (v) => v,
};

/** A JSON null that prints as the Go type behind it would ("[]", "map[]", "<nil>"). */
export class TypedNull {
  constructor(readonly text: string) {}
}

export interface ExecOptions {
  /** How a null field prints, by its key (inspect: typed nil slices, maps and pointers). */
  nullText?: (key: string) => string | undefined;
  /** Missing map keys are errors ("map has no entry for key"), as inspect's fallback runs. */
  missingKeyError?: boolean;
  /** Make the header row: the header functions replace the CLI's. */
  header?: boolean;
  /** Extra functions (`getDetailsOrder` for version). */
  funcs?: Record<string, Fn>;
}

export class Template {
  private readonly nodes: Node[];

  constructor(
    readonly source: string,
    readonly name = "",
  ) {
    this.nodes = new Parser(source, name).parse();
  }

  /** Runs the template on `data`; a failure is a TemplateError worded as Go's. */
  execute(data: unknown, opts: ExecOptions = {}): string {
    const funcs: Record<string, Fn> = { ...BASIC, ...(opts.header ? HEADER : {}), ...opts.funcs };
    const out: string[] = [];
    const vars: [string, unknown][] = [["$", data]];
    const src = this.source;
    const name = this.name;

    const fail = (pos: number, at: string, msg: string): never => {
      const before = src.slice(0, pos);
      const line = before.split("\n").length;
      const col = pos - (before.lastIndexOf("\n") + 1);
      throw new TemplateError(`template: ${name}:${line}:${col}: executing "${name}" at <${at}>: ${msg}`);
    };

    /** An error at a pipeline's first operand (where Go reports range and if errors). */
    const failAtPipe = (pipe: Pipe, msg: string): never => {
      const head = pipe.cmds[0][0];
      if (head.kind === "field" || head.kind === "pipe") return fail(head.pos, head.text, msg);
      return fail(0, "", msg);
    };

    const lookupVar = (v: string, pos: number): unknown => {
      for (let i = vars.length - 1; i >= 0; i--) if (vars[i][0] === v) return vars[i][1];
      return fail(pos, v, `undefined variable: ${v}`);
    };

    const field = (recv: unknown, names: string[], args: unknown[], arg: { pos: number; text: string }): unknown => {
      let cur = recv;
      for (let n = 0; n < names.length; n++) {
        const key = names[n];
        const last = n === names.length - 1;
        if (isStruct(cur)) {
          if (!(key in cur)) return fail(arg.pos, arg.text, `can't evaluate field ${key} in type ${cur[STRUCT]}`);
          const m = cur[key];
          if (typeof m === "function") {
            const callArgs = last ? args : [];
            if (m.length !== callArgs.length) return fail(arg.pos, arg.text, `wrong number of args for ${key}: want ${m.length} got ${callArgs.length}`);
            try {
              cur = (m as Fn).apply(cur, callArgs);
            } catch (e) {
              if (e instanceof TemplateError) return fail(arg.pos, arg.text, `error calling ${key}: ${e.message}`);
              throw e;
            }
            continue;
          }
          if (last && args.length) return fail(arg.pos, arg.text, `${key} has arguments but cannot be invoked as function`);
          cur = m;
        } else if (cur instanceof GoMap) {
          cur = key in cur.entries ? cur.entries[key] : "";
        } else if (cur !== null && typeof cur === "object" && !Array.isArray(cur)) {
          if (last && args.length) return fail(arg.pos, arg.text, `${key} is not a method but has arguments`);
          const rec = cur as Record<string, unknown>;
          if (Object.prototype.hasOwnProperty.call(rec, key)) cur = rec[key] === null && opts.nullText ? new TypedNull(opts.nullText(key) ?? "[]") : rec[key];
          else if (opts.nullText?.(key) !== undefined) cur = new TypedNull(opts.nullText(key)!);
          else if (opts.missingKeyError) return fail(arg.pos, arg.text, `map has no entry for key "${key}"`);
          else cur = NO_VALUE;
        } else if (cur === null || cur === NO_VALUE || cur === undefined) {
          return fail(arg.pos, arg.text, `nil pointer evaluating interface {}.${key}`);
        } else {
          return fail(arg.pos, arg.text, `can't evaluate field ${key} in type ${typeName(cur)}`);
        }
      }
      if (names.length === 0 && args.length) return fail(arg.pos, arg.text, `can't give argument to non-function ${arg.text}`);
      return cur;
    };

    const evalArg = (a: Arg, dot: unknown): unknown => {
      if (a.kind === "lit") return a.value;
      if (a.kind === "field") return field(a.base === "dot" ? dot : lookupVar(a.base, a.pos), a.names, [], a);
      if (a.kind === "pipe") {
        const v = evalPipe(a.pipe, dot);
        return a.names.length ? field(v, a.names, [], a) : v;
      }
      return callFn(a.name, [], a.pos, undefined);
    };

    const callFn = (fname: string, args: unknown[], pos: number, piped: unknown): unknown => {
      const fn = funcs[fname];
      if (!fn) return fail(pos, fname, `function "${fname}" not defined`);
      const all = piped === undefined ? args : [...args, piped];
      try {
        return fn(...all);
      } catch (e) {
        if (e instanceof TemplateError) return fail(pos, fname, e.message.startsWith("error calling") ? e.message : `error calling ${fname}: ${e.message}`);
        throw e;
      }
    };

    const evalCmd = (cmd: Arg[], dot: unknown, piped: unknown): unknown => {
      const [head, ...rest] = cmd;
      const args = () => rest.map((r) => evalArg(r, dot));
      if (head.kind === "call") return callFn(head.name, args(), head.pos, piped);
      if (head.kind === "field" && (rest.length > 0 || piped !== undefined)) {
        const a = args();
        if (piped !== undefined) a.push(piped);
        return field(head.base === "dot" ? dot : lookupVar(head.base, head.pos), head.names, a, head);
      }
      if (rest.length > 0) return fail(head.kind === "lit" ? 0 : head.pos, "", "can't give argument to non-function");
      return evalArg(head, dot);
    };

    const evalPipe = (pipe: Pipe, dot: unknown): unknown => {
      let v: unknown = undefined;
      for (const cmd of pipe.cmds) v = evalCmd(cmd, dot, v);
      return v;
    };

    const run = (nodes: Node[], dot: unknown) => {
      for (const node of nodes) {
        if (node.kind === "text") {
          out.push(node.text);
        } else if (node.kind === "action") {
          const v = evalPipe(node.pipe, dot);
          if (node.pipe.decl.length) vars.push([node.pipe.decl[0], v]);
          else out.push(goString(v));
        } else if (node.kind === "if" || node.kind === "with") {
          const mark = vars.length;
          const v = evalPipe(node.pipe, dot);
          if (node.pipe.decl.length) vars.push([node.pipe.decl[0], v]);
          if (truth(v)) run(node.then, node.kind === "with" ? v : dot);
          else if (node.else) run(node.else, dot);
          vars.length = mark;
        } else if (node.kind === "range") {
          const v = evalPipe(node.pipe, dot);
          const items: [unknown, unknown][] = Array.isArray(v)
            ? v.map((x, i) => [i, x])
            : v instanceof GoMap
              ? Object.keys(v.entries).sort().map((k) => [k, v.entries[k]])
              : v && typeof v === "object" && !isStruct(v)
                ? Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])
                : typeof v === "number"
                  ? Array.from({ length: Math.max(0, v) }, (_x, i) => [i, i])
                  : v === null || v === NO_VALUE || v === undefined
                    ? []
                    : failAtPipe(node.pipe, `range can't iterate over ${goString(v)}`);
          if (items.length === 0) {
            if (node.else) run(node.else, dot);
            continue;
          }
          for (const [k, x] of items) {
            const mark = vars.length;
            if (node.pipe.decl.length === 1) vars.push([node.pipe.decl[0], x]);
            else if (node.pipe.decl.length === 2) vars.push([node.pipe.decl[0], k], [node.pipe.decl[1], x]);
            run(node.body, x);
            vars.length = mark;
          }
        }
      }
    };
    run(this.nodes, data);
    return out.join("");
  }
}

/** Parses a template; errors as the Go parser words them. */
export function parseTemplate(source: string, name = ""): Template {
  return new Template(source, name);
}

/** A header context: every field a column's name, `.Label "a.b"` the label's last part. */
export function headerContext(typeName: string, headers: Record<string, string | TypedNull>): GoStruct {
  return struct(typeName, {
    ...headers,
    Label(name: string) {
      const parts = String(name).split(".");
      return parts[parts.length - 1].replace(/[-_]/g, " ");
    },
  });
}
