/** The filters of `GET /images/json` and `POST /images/prune`. */
import type { Image, ImageStore } from "../../../core/images/image-store.js";
import { errors } from "../../../core/errors.js";
import { familiarName } from "../../../core/images/reference.js";
import { hasLabel, untilTime } from "../filter-values.js";
import { filterBool } from "../query.js";

const globs = new Map<string, RegExp>();

/** Go's path.Match: `*` and `?` (never across `/`), `[...]` classes with ranges and `^`, `\\` escapes; anchored. */
function globMatch(pattern: string, text: string): boolean {
  let re = globs.get(pattern);
  if (!re) {
    re = new RegExp(`^${globSource(pattern)}$`, "u");
    if (globs.size > 1000) globs.clear(); // (patterns come from requests: bounded)
    globs.set(pattern, re);
  }
  return re.test(text);
}

/** The regular expression of a path.Match pattern; a malformed one is Go's ErrBadPattern (400 here; Docker's daemon answers 500). */
function globSource(pattern: string): string {
  const bad = () => errors.apiInvalidBody("syntax error in pattern");
  const chars = [...pattern];
  const literal = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/gu, "\\$&");
  const inClass = (c: string) => c.replace(/[\]\\^-]/gu, "\\$&");
  let out = "";
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "\\") {
      if (i + 1 >= chars.length) throw bad();
      out += literal(chars[++i]);
    } else if (c === "[") {
      let j = i + 1;
      let negate = false;
      if (chars[j] === "^") {
        negate = true;
        j++;
      }
      const ranges: string[] = [];
      for (;;) {
        if (j >= chars.length) throw bad();
        if (chars[j] === "]" && ranges.length > 0) break;
        const endpoint = () => {
          let ch = chars[j];
          if (ch === undefined || ch === "-" || ch === "]") throw bad();
          if (ch === "\\") {
            ch = chars[++j];
            if (ch === undefined) throw bad();
          }
          j++;
          return ch;
        };
        const lo = endpoint();
        if (chars[j] === "-") {
          j++;
          const hi = endpoint();
          // (a range from high to low matches nothing, as in Go: JavaScript would refuse it)
          ranges.push(hi.codePointAt(0)! < lo.codePointAt(0)! ? "" : `${inClass(lo)}-${inClass(hi)}`);
        } else ranges.push(inClass(lo));
      }
      // (unlike `*` and `?`, a class may take `/`, as path.Match's does)
      out += `[${negate ? "^" : ""}${ranges.join("")}]`;
      i = j;
    } else out += literal(c);
  }
  return out;
}

/**
 * The image's references a `reference` filter matches (Docker's FamiliarMatch: the familiar
 * form with its tag or digest, else without): the only names a filtered list shows of it.
 */
export function matchingReferences(image: Image, patterns: readonly string[]): string[] {
  return image.references.filter((r) => {
    const n = familiarName(r);
    return patterns.some((p) => globMatch(p, n) || globMatch(p, n.replace(/[:@][^/]*$/, "")));
  });
}

export function imageFilter(filters: Map<string, string[]>, store: ImageStore): (image: Image) => boolean {
  const created = (name: string) => Date.parse(store.resolve(name).config.created ?? "") || 0;
  const before = filters.get("before")?.map(created);
  const since = filters.get("since")?.map(created);
  const until = filters.get("until")?.map(untilTime);
  const dangling = filterBool(filters, "dangling");
  return (image) => {
    const time = Date.parse(image.config.created ?? "") || 0;
    if (dangling !== undefined && dangling !== (image.references.length === 0)) return false;
    if (filters.get("reference")?.length && matchingReferences(image, filters.get("reference")!).length === 0) return false;
    if (!(filters.get("label") ?? []).every((w) => hasLabel(image.config.config?.Labels, w))) return false;
    if (before && !before.every((t) => time < t)) return false;
    if (since && !since.every((t) => time > t)) return false;
    if (until && !until.every((t) => time < t)) return false;
    return true;
  };
}
