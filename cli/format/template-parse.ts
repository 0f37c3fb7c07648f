/**
 * The parsing stage of the Go template engine (template-lex.ts cuts the text, template.ts runs
 * what this makes): the lexemes become nodes (actions, if/with/range with their else branches)
 * and pipelines of commands whose arguments are fields, variables, calls, literals and
 * parenthesised pipes.
 */

import { lexAction, lineOf, TemplateError, tokenize, type Token } from "./template-lex.js";

export { TemplateError };

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
