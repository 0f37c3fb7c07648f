/**
 * The parsing half of the Go template engine (template.ts runs what this parses): the text is
 * cut into text and actions (`{{ }}` with `{{-`/`-}}` trimming), each action into lexemes, and
 * the lexemes into nodes (actions, if/with/range with their else branches) and pipelines of
 * commands whose arguments are fields, variables, calls, literals and parenthesised pipes.
 */

/** A template that does not parse or fails to run, worded as Go's errors. */
export class TemplateError extends Error {}

export type Node =
  | { kind: "text"; text: string }
  | { kind: "action"; pipe: Pipe; pos: number }
  | { kind: "if" | "with"; pipe: Pipe; then: Node[]; else?: Node[]; pos: number }
  | { kind: "range"; pipe: Pipe; body: Node[]; else?: Node[]; pos: number };

export interface Pipe {
  decl: string[];
  cmds: Arg[][];
}

export type Arg =
  | { kind: "field"; base: "dot" | string; names: string[]; pos: number; text: string }
  | { kind: "call"; name: string; pos: number }
  | { kind: "lit"; value: unknown }
  | { kind: "pipe"; pipe: Pipe; names: string[]; pos: number; text: string };

interface Token {
  type: "text" | "action";
  value: string;
  /** Where the action's content starts in the template. */
  pos: number;
}

function lineOf(src: string, pos: number): number {
  let n = 1;
  for (let i = 0; i < pos && i < src.length; i++) if (src[i] === "\n") n++;
  return n;
}

function tokenize(src: string, name: string): Token[] {
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

interface Lexeme {
  t: "field" | "var" | "ident" | "string" | "number" | "pipe" | "lparen" | "rparen" | "decl" | "comma";
  v: string;
  pos: number;
}

function lexAction(text: string, base: number, name: string, src: string): Lexeme[] {
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

export class Parser {
  private tokens: Token[];
  private i = 0;

  constructor(
    private readonly src: string,
    private readonly name: string,
  ) {
    this.tokens = tokenize(src, name);
  }

  private fail(pos: number, msg: string): never {
    throw new TemplateError(`template: ${this.name}:${lineOf(this.src, pos)}: ${msg}`);
  }

  parse(): Node[] {
    const { nodes, end } = this.list();
    if (end) this.fail(end.pos, `unexpected {{${end.value.trim()}}}`);
    return nodes;
  }

  /** Nodes up to an {{end}}, {{else ...}} (returned) or the end of the template. */
  private list(): { nodes: Node[]; end?: Token } {
    const nodes: Node[] = [];
    while (this.i < this.tokens.length) {
      const tok = this.tokens[this.i++];
      if (tok.type === "text") {
        nodes.push({ kind: "text", text: tok.value });
        continue;
      }
      const body = tok.value.trim();
      if (body.startsWith("/*")) {
        if (!body.endsWith("*/")) this.fail(tok.pos, "unclosed comment");
        continue;
      }
      const kw = /^(if|range|with|end|else|define|template|block|break|continue)\b/.exec(body)?.[1];
      if (kw === "end" || kw === "else") return { nodes, end: tok };
      if (kw === "if" || kw === "with" || kw === "range") {
        nodes.push(this.control(kw, tok, body.slice(kw.length)));
        continue;
      }
      if (kw) this.fail(tok.pos, `{{${kw}}} is not supported here`);
      if (body === "") this.fail(tok.pos, "missing value for command");
      nodes.push({ kind: "action", pipe: this.pipe(body, tok.pos + tok.value.indexOf(body[0])), pos: tok.pos });
    }
    return { nodes };
  }

  private control(kw: "if" | "with" | "range", tok: Token, rest: string): Node {
    const offset = tok.pos + tok.value.indexOf(kw) + kw.length;
    const pipe = this.pipe(rest, offset);
    const { nodes, end } = this.list();
    if (!end) this.fail(tok.pos, `unexpected EOF`);
    let elseNodes: Node[] | undefined;
    const endBody = end.value.trim();
    if (endBody.startsWith("else")) {
      const after = endBody.slice(4).trim();
      if (after.startsWith("if ") && kw === "if") {
        // {{else if X}} is {{else}}{{if X}}...{{end}}, the two sharing the one {{end}}
        const innerTok: Token = { type: "action", value: after, pos: end.pos + end.value.indexOf(after) };
        const inner = this.control("if", innerTok, after.slice(2));
        return { kind: kw, pipe, then: nodes, else: [inner], pos: tok.pos };
      }
      if (after) this.fail(end.pos, `unexpected "${after}" in else`);
      const tail = this.list();
      if (!tail.end || tail.end.value.trim() !== "end") this.fail(tok.pos, "expected end; found EOF");
      elseNodes = tail.nodes;
    }
    if (kw === "range") return { kind: "range", pipe, body: nodes, else: elseNodes, pos: tok.pos };
    return { kind: kw, pipe, then: nodes, else: elseNodes, pos: tok.pos };
  }

  private pipe(text: string, base: number): Pipe {
    const lex = lexAction(text, base, this.name, this.src);
    let k = 0;
    const decl: string[] = [];
    // $x := ...   or   $i, $e := ...
    const declEnd = lex.findIndex((l) => l.t === "decl");
    if (declEnd > 0 && lex.slice(0, declEnd).every((l) => l.t === "var" || l.t === "comma")) {
      for (const l of lex.slice(0, declEnd)) if (l.t === "var") decl.push(l.v);
      k = declEnd + 1;
    }
    const parsePipe = (stopAtParen: boolean): Arg[][] => {
      const cmds: Arg[][] = [[]];
      for (; k < lex.length; k++) {
        const l = lex[k];
        const cmd = cmds[cmds.length - 1];
        if (l.t === "pipe") {
          if (cmd.length === 0) this.fail(l.pos, "missing command");
          cmds.push([]);
        } else if (l.t === "rparen") {
          if (!stopAtParen) this.fail(l.pos, "unexpected right paren");
          return cmds;
        } else if (l.t === "lparen") {
          k++;
          const startPos = l.pos;
          const inner = parsePipe(true);
          if (lex[k]?.t !== "rparen") this.fail(l.pos, "unclosed left paren");
          // a field chain glued to the paren: (index . "a").B
          let names: string[] = [];
          const next = lex[k + 1];
          if (next && next.t === "field" && next.v !== "." && next.pos === lex[k].pos + 1) {
            names = next.v.split(".").slice(1);
            k++;
          }
          cmd.push({ kind: "pipe", pipe: { decl: [], cmds: inner }, names, pos: startPos, text: this.src.slice(startPos, (lex[k].pos ?? startPos) + lex[k].v.length) });
        } else if (l.t === "field") {
          cmd.push({ kind: "field", base: "dot", names: l.v === "." ? [] : l.v.split(".").slice(1), pos: l.v === "." ? l.pos : l.pos + l.v.lastIndexOf("."), text: l.v });
        } else if (l.t === "var") {
          const [v, ...names] = l.v.split(".");
          cmd.push({ kind: "field", base: v, names, pos: l.pos + (names.length ? l.v.lastIndexOf(".") : 0), text: l.v });
        } else if (l.t === "string") {
          cmd.push({ kind: "lit", value: l.v });
        } else if (l.t === "number") {
          cmd.push({ kind: "lit", value: Number(l.v) });
        } else if (l.t === "ident") {
          if (l.v === "true" || l.v === "false") cmd.push({ kind: "lit", value: l.v === "true" });
          else if (l.v === "nil") cmd.push({ kind: "lit", value: null });
          else cmd.push({ kind: "call", name: l.v, pos: l.pos });
        } else {
          this.fail(l.pos, `unexpected "${l.v}" in command`);
        }
      }
      if (stopAtParen) this.fail(base, "unclosed left paren");
      return cmds;
    };
    const cmds = parsePipe(false);
    if (cmds[cmds.length - 1].length === 0) this.fail(base, "missing value for command");
    return { decl, cmds };
  }
}
