/**
 * Go's json.Compact: the same JSON text without the whitespace between tokens (strings,
 * numbers and escapes kept as written), and the first syntax error in the words of Go's
 * encoding/json scanner ("invalid character 'b' looking for beginning of object key string").
 * The Docker CLI sends a `--security-opt seccomp=FILE` profile this way.
 */

/** Go's quoteChar: a character of an error message, in single quotes. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const q = JSON.stringify(c);
  return `'${q.slice(1, -1)}'`;
}

class JsonSyntaxError extends Error {}

export function compactJson(text: string): string {
  let i = 0;
  let out = "";
  const fail = (context: string): never => {
    if (i >= text.length) throw new JsonSyntaxError("unexpected end of JSON input");
    throw new JsonSyntaxError(`invalid character ${quoteChar(text[i])} ${context}`);
  };
  const space = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const take = (s: string) => {
    out += s;
    i += s.length;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++, i++) {
      if (text[i] !== word[k]) fail(`in literal ${word} (expecting ${quoteChar(word[k])})`);
      out += word[k];
    }
  };
  const string = () => {
    take('"');
    for (;;) {
      if (i >= text.length) fail("");
      const c = text[i];
      if (c === '"') return take('"');
      if (c < " ") fail("in string literal");
      if (c !== "\\") {
        take(c);
        continue;
      }
      take("\\");
      if (i >= text.length) fail("");
      if (text[i] === "u") {
        take("u");
        for (let k = 0; k < 4; k++) /[0-9a-fA-F]/.test(text[i] ?? "") ? take(text[i]) : fail("in \\u hexadecimal character escape");
      } else if ('"\\/bfnrt'.includes(text[i])) take(text[i]);
      else fail("in string escape code");
    }
  };
  const digits = (context: string) => {
    if (!/[0-9]/.test(text[i] ?? "")) fail(context);
    while (/[0-9]/.test(text[i] ?? "")) take(text[i]);
  };
  const number = () => {
    if (text[i] === "-") take("-");
    if (text[i] === "0") take("0");
    else digits("in numeric literal");
    if (text[i] === ".") {
      take(".");
      digits("after decimal point in numeric literal");
    }
    if (text[i] === "e" || text[i] === "E") {
      take(text[i]);
      if (text[i] === "+" || text[i] === "-") take(text[i]);
      digits("in exponent of numeric literal");
    }
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === "{") {
      take("{");
      space();
      if (text[i] === "}") return take("}");
      for (;;) {
        space();
        if (text[i] !== '"') fail("looking for beginning of object key string");
        string();
        space();
        if (text[i] !== ":") fail("after object key");
        take(":");
        value();
        space();
        if (text[i] === "}") return take("}");
        if (text[i] !== ",") fail("after object key:value pair");
        take(",");
      }
    }
    if (c === "[") {
      take("[");
      space();
      if (text[i] === "]") return take("]");
      for (;;) {
        value();
        space();
        if (text[i] === "]") return take("]");
        if (text[i] !== ",") fail("after array element");
        take(",");
      }
    }
    if (c === '"') return string();
    if (c === "-" || /[0-9]/.test(c ?? "")) return number();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    fail("looking for beginning of value");
  };
  value();
  space();
  if (i < text.length) fail("after top-level value");
  return out;
}
