/**
 * The functions a template may call, as Go's text/template funcs.go and the Docker CLI's
 * formatter add them: the CLI's (json, join, split, title, lower, upper, pad, truncate) and Go's
 * own (index, len, printf, print, println, eq, ne, lt, le, gt, ge, and, or, not, urlquery), and
 * the stand-ins that make a table's header row.
 */

import { TemplateError } from "./template-lex.js";
import { goJson, goString, GoMap, isStruct, NO_VALUE, truth, typeName } from "./template-values.js";

/** A template function: Go's reflection calls become plain calls with the evaluated arguments. */
export type Fn = (...args: unknown[]) => unknown;

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

export const BASIC: Record<string, Fn> = {
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
export const HEADER: Record<string, Fn> = {
  json: (v) => v,
  split: (v) => v,
  join: (v) => v,
  title: (v) => v,
  lower: (v) => v,
  upper: (v) => v,
  truncate: (v) => v,
};
