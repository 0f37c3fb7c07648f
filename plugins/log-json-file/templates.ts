/**
 * Why this file: `tag` templates and the `*-regex` options are checked when the logger is made,
 * and Docker reports a bad one with Go's own words (`template: log-tag:1:2: executing ...`,
 * `error parsing regexp: missing closing ]: ...`); those words, and the fields a tag may use,
 * live here, apart from the option rules.
 */

/** The fields a `tag` template may use (expanded in format.ts). */
export const TAG_FIELDS = ["ID", "FullID", "Name", "ImageID", "ImageFullID", "ImageName", "DaemonName"] as const;
export const TAG_FIELD_RE = /\{\{\s*\.(\w+)\s*\}\}/g;

/**
 * Checks a tag template as Go's text/template would fail on it: an action without its `}}`
 * (`template: log-tag:1: unclosed action`), or a field `logger.Info` does not have (`template:
 * log-tag:L:C: executing "log-tag" at <.X>: can't evaluate field X in type *logger.Info`, C the
 * byte offset of the field in its line).
 */
export function parseTagTemplate(template: string): void {
  const lineOf = (at: number) => template.slice(0, at).split("\n").length;
  for (let at = template.indexOf("{{"); at >= 0; at = template.indexOf("{{", at + 2)) {
    const end = template.indexOf("}}", at + 2);
    if (end < 0) throw new Error(`template: log-tag:${lineOf(at)}: unclosed action`);
    const m = /^\s*\.(\w+)\s*$/.exec(template.slice(at + 2, end));
    if (m && !(TAG_FIELDS as readonly string[]).includes(m[1])) {
      const fieldAt = template.indexOf(".", at);
      const col = fieldAt - (template.lastIndexOf("\n", fieldAt) + 1);
      throw new Error(`template: log-tag:${lineOf(fieldAt)}:${col}: executing "log-tag" at <.${m[1]}>: can't evaluate field ${m[1]} in type *logger.Info`);
    }
  }
}

/** JavaScript's RegExp errors in Go's words, for the common mistakes. */
const GO_REGEXP_WORDS: [RegExp, string][] = [
  [/Unterminated character class/i, "missing closing ]"],
  [/Unterminated group/i, "missing closing )"],
  [/Unmatched '\)'/i, "unexpected )"],
  [/Nothing to repeat/i, "missing argument to repetition operator"],
  [/\\ at end of pattern/i, "trailing backslash at end of expression"],
];

/** A regular expression, or Go's `error parsing regexp: <what>: \`<expr>\`` for a bad one. */
export function goRegexp(raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (err) {
    const words = GO_REGEXP_WORDS.find(([re]) => re.test((err as Error).message))?.[1] ?? "invalid syntax";
    throw new Error(`error parsing regexp: ${words}: \`${raw}\``);
  }
}
