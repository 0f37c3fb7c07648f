/**
 * Go's text/template, the part the Docker CLI's `--format` uses: text and `{{ }}` actions with
 * `{{-`/`-}}` trimming, fields (`.A.B`), methods with arguments (`.Label "k"`), variables
 * (`$`, `$x := ...`), pipelines (`|`), parentheses, `if`/`else if`/`else`/`range`/`with`/`end`,
 * and the functions the CLI adds (json, join, split, title, lower, upper, pad, truncate) with
 * Go's own (index, len, printf, print, println, eq, ne, lt, le, gt, ge, and, or, not).
 * Errors read as Go's do ("template: :1:2: executing "" at <.Foo>: ...").
 *
 * Split as Go's package is: template-lex.ts (lex), template-parse.ts (parse), this file (exec),
 * template-funcs.ts (funcs), template-values.ts (the values a template sees, `struct()`).
 */

import { BASIC, HEADER, type Fn } from "./template-funcs.js";
import { Parser, TemplateError, type Arg, type Node, type Pipe } from "./template-parse.js";
import { GoMap, goString, isStruct, NO_VALUE, STRUCT, struct, truth, typeName, TypedNull, type GoStruct } from "./template-values.js";

export { TemplateError };
export { GoMap, goJson, MarshaledJson, plainStruct, struct, TypedNull, type GoStruct } from "./template-values.js";

export interface ExecOptions {
  /** How a null field prints, by its key (inspect: typed nil slices, maps and pointers). */
  nullText?: (key: string) => string | undefined;
  /** Missing map keys are errors ("map has no entry for key"), as inspect's fallback runs. */
  missingKeyError?: boolean;
  /** Fields by Go's names where they differ from the JSON keys, as on the Docker CLI's typed structs. */
  goNames?: boolean;
  /** Make the header row: the header functions replace the CLI's. */
  header?: boolean;
  /** Extra functions (`getDetailsOrder` for version). */
  funcs?: Record<string, Fn>;
}

/**
 * The API's JSON key of a Go field whose name differs from it. The Docker CLI runs an inspect
 * template on its typed structs first (Go's names: `.ID`, `.HostConfig.CPUShares`), and on the
 * raw JSON only when that fails (`.Id`, `.HostConfig.CpuShares`): either spelling works, not
 * both in one template.
 */
function goFieldKey(goName: string): string | undefined {
  if (goName === "ID") return "Id";
  if (/^CPU[A-Z]/.test(goName)) return `Cpu${goName.slice(3)}`;
  return undefined;
}

/** A JSON key whose Go field is named otherwise (`Id`, `CpuShares`): no field of a typed struct. */
const isJsonOnlyKey = (key: string): boolean => key === "Id" || /^Cpu[A-Z]/.test(key);

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
          // a missing key is Go's invalid value: printed "<no value>" (`index` gives "" instead)
          cur = key in cur.entries ? cur.entries[key] : NO_VALUE;
        } else if (cur !== null && typeof cur === "object" && !Array.isArray(cur)) {
          if (last && args.length) return fail(arg.pos, arg.text, `${key} is not a method but has arguments`);
          const rec = cur as Record<string, unknown>;
          const alias = opts.goNames ? goFieldKey(key) : undefined;
          if (opts.goNames && isJsonOnlyKey(key)) return fail(arg.pos, arg.text, `can't evaluate field ${key}`);
          if (alias !== undefined && !Object.prototype.hasOwnProperty.call(rec, key) && Object.prototype.hasOwnProperty.call(rec, alias)) cur = rec[alias];
          else if (Object.prototype.hasOwnProperty.call(rec, key)) cur = rec[key] === null && opts.nullText ? new TypedNull(opts.nullText(key) ?? "[]") : rec[key];
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
    try {
      run(this.nodes, data);
    } catch (e) {
      // Go has written what came before the failure: commands that print it need it
      if (e instanceof TemplateError) e.partial = out.join("");
      throw e;
    }
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
