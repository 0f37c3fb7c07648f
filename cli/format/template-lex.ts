/**
 * The lexing stage of the Go template engine, as text/template/parse's lex.go: the template is
 * cut into text and actions (`{{ }}` with `{{-`/`-}}` trimming), and each action into lexemes
 * (fields, variables, identifiers, literals, pipes, parentheses). Errors carry the template's
 * name and line, as Go's do.
 */

/** A template that does not parse or fails to run, worded as Go's errors. */
export class TemplateError extends Error {
  /** At a failure while running: the output written before it, as Go's writer has it. */
  partial = "";
}

export interface Token {
  type: "text" | "action";
  value: string;
  /** Where the action's content starts in the template. */
  pos: number;
}

export function lineOf(src: string, pos: number): number {
  let n = 1;
  for (let i = 0; i < pos && i < src.length; i++) if (src[i] === "\n") n++;
  return n;
}

export function tokenize(src: string, name: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf("{{", i);
    if (open < 0) {
      tokens.push({ type: "text", value: src.slice(i), pos: i });
      break;
    }
    let text = src.slice(i, open);
    let start = open + 2;
    if (src.startsWith("- ", start) || src.startsWith("-\t", start) || src.startsWith("-\n", start) || src.startsWith("-\r", start)) {
      text = text.replace(/[ \t\r\n]+$/, "");
      start += 1;
    }
    if (text) tokens.push({ type: "text", value: text, pos: i });
    // the action ends at the first "}}" outside of quotes
    let j = start;
    let quote = "";
    let close = -1;
    while (j < src.length) {
      const c = src[j];
      if (quote) {
        if (c === "\\" && quote !== "`") j++;
        else if (c === quote) quote = "";
      } else if (c === '"' || c === "`" || c === "'") quote = c;
      else if (src.startsWith("}}", j)) {
        close = j;
        break;
      }
      j++;
    }
    if (close < 0) throw new TemplateError(`template: ${name}:${lineOf(src, open)}: unclosed action`);
    let end = close;
    let after = close + 2;
    if (/[ \t\r\n]-$/.test(src.slice(start, close))) {
      end = close - 1;
      while (after < src.length && /[ \t\r\n]/.test(src[after])) after++;
    }
    tokens.push({ type: "action", value: src.slice(start, end), pos: start });
    i = after;
  }
  return tokens;
}

export interface Lexeme {
  t: "field" | "var" | "ident" | "string" | "number" | "pipe" | "lparen" | "rparen" | "decl" | "comma";
  v: string;
  pos: number;
}

export function lexAction(text: string, base: number, name: string, src: string): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  const fail = (msg: string) => {
    throw new TemplateError(`template: ${name}:${lineOf(src, base)}: ${msg}`);
  };
  while (i < text.length) {
    const c = text[i];
    const pos = base + i;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "|") {
      out.push({ t: "pipe", v: c, pos });
      i++;
    } else if (c === "(") {
      out.push({ t: "lparen", v: c, pos });
      i++;
    } else if (c === ")") {
      out.push({ t: "rparen", v: c, pos });
      i++;
    } else if (c === ",") {
      out.push({ t: "comma", v: c, pos });
      i++;
    } else if (text.startsWith(":=", i) || c === "=") {
      out.push({ t: "decl", v: ":=", pos });
      i += c === "=" ? 1 : 2;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) fail("unterminated quoted string");
      out.push({ t: "string", v: JSON.parse(text.slice(i, j + 1).replace(/\\x([0-9a-fA-F]{2})/g, "\\u00$1")) as string, pos });
      i = j + 1;
    } else if (c === "`") {
      const j = text.indexOf("`", i + 1);
      if (j < 0) fail("unterminated raw quoted string");
      out.push({ t: "string", v: text.slice(i + 1, j), pos });
      i = j + 1;
    } else if (c === "'") {
      const m = /^'(\\.|[^'])'/.exec(text.slice(i));
      if (!m) fail("unterminated character constant");
      out.push({ t: "number", v: String((JSON.parse(`"${m![1]}"`) as string).codePointAt(0)), pos });
      i += m![0].length;
    } else if (c === "." || c === "$") {
      const m = /^(\$[\w]*|\.)?((?:\.[A-Za-z_]\w*)*)/.exec(text.slice(i))!;
      let word = m[0];
      if (c === "." && /^\.\d/.test(text.slice(i))) {
        const num = /^\.\d+([eE][+-]?\d+)?/.exec(text.slice(i))![0];
        out.push({ t: "number", v: num, pos });
        i += num.length;
        continue;
      }
      if (c === ".") {
        // "." alone, or ".A.B"
        word = /^(\.[A-Za-z_]\w*)+|^\./.exec(text.slice(i))![0];
        out.push({ t: "field", v: word, pos });
      } else {
        out.push({ t: "var", v: word, pos });
      }
      i += word.length;
    } else if (/[-+\d]/.test(c)) {
      const m = /^[-+]?(0x[0-9a-fA-F]+|\d+(\.\d*)?([eE][+-]?\d+)?)/.exec(text.slice(i));
      if (!m) fail(`unexpected "${c}" in command`);
      out.push({ t: "number", v: m![0], pos });
      i += m![0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_]\w*/.exec(text.slice(i))![0];
      out.push({ t: "ident", v: word, pos });
      i += word.length;
      if (text[i] === ".") fail("unexpected <.> in operand");
    } else {
      fail(`unexpected "${c}" in command`);
    }
  }
  return out;
}
