/**
 * Drives the completion of a real shell, as someone pressing TAB does: an interactive bash or
 * zsh in a pseudo-terminal (terminal.ts) loads `engine completion SHELL`, then each line is
 * typed with a TAB. What the shell's own completion machinery produced is caught right there:
 * in bash, the function `complete -p engine` names is wrapped and COMPREPLY (with the options
 * compopt set) printed after it ran; in zsh, the TAB key runs complete-word and every match
 * the completion functions add through compadd is printed. fish answers `complete -C LINE`
 * itself, without a terminal.
 */
import { ENGINE } from "./engine-cli.js";
import { runCommand } from "./engined.js";
import { inTerminal, type TerminalSession } from "./terminal.js";

export interface Completed {
  /** The candidates the shell got, sorted. */
  candidates: string[];
  /** bash: the options compopt set (`default`, `nospace`); zsh: none. */
  options: string[];
}

export interface ShellSession {
  complete(line: string): Promise<Completed>;
  close(): void;
}

const BASH_SETUP = [
  "PS1='$ '",
  `source <(engine completion bash)`,
  // the function the script registered, wrapped: it runs as bash calls it, then shows COMPREPLY
  `__spec=$(complete -p engine); __fn=\${__spec#*-F }; __fn=\${__fn%% *}; __n=0`,
  `__capture() { "$__fn" "$@"; local IFS=' ' opts; opts=$(compopt 2>/dev/null); printf '\\n<<%d|%s|%s>>\\n' "$((++__n))" "\${COMPREPLY[*]}" "$opts"; }`,
  `eval "\${__spec/-F $__fn/-F __capture}"`,
];

const ZSH_SETUP = [
  "PS1='$ '",
  "autoload -U compinit && compinit -u -D",
  "source <(engine completion zsh)",
  "typeset -ga __hits; typeset -gi __n=0",
  // compadd as the completion functions call it, keeping what it matched (its internal -O/-A/-D calls pass through)
  `compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return $?; fi; local -a got; builtin compadd -A got "$@"; __hits+=("\${got[@]}"); }`,
  `__capture() { __hits=(); zle complete-word; print -rn -- $'\\n'"<<$((++__n))|\${(j: :)__hits}|>>"$'\\n'; }`,
  "zle -N __capture; bindkey '^I' __capture",
];

/** An interactive `shell` with engine's completion loaded, `engine` on PATH and `env` set. */
export async function shellSession(shell: "bash" | "zsh", env: NodeJS.ProcessEnv, cwd: string): Promise<ShellSession> {
  const argv = shell === "bash" ? ["bash", "--norc", "--noprofile", "-i"] : ["zsh", "-f", "-i"];
  const path = `${ENGINE.replace(/\/engine$/, "")}:${process.env.PATH}`;
  const t: TerminalSession = inTerminal(argv, { cols: 400, rows: 50, env: { ...env, PATH: path, HISTFILE: "/dev/null" }, cwd, timeoutMs: 300_000 });
  for (const line of shell === "bash" ? BASH_SETUP : ZSH_SETUP) t.type(`${line}\r`);
  // the sum is computed by the shell: the typed line itself cannot match
  t.type("echo ready-$((20+22))\r");
  await t.waitFor(/ready-42/, 30_000);
  let n = 0;
  return {
    async complete(line) {
      n++;
      t.type(`${line}\t`);
      const shown = await t.waitFor(new RegExp(`<<${n}\\|([^|>]*)\\|([^>]*)>>`), 20_000);
      const m = new RegExp(`<<${n}\\|([^|>]*)\\|([^>]*)>>`).exec(shown)!;
      t.type("\x15"); // ctrl-u: the next line starts empty
      const options = [...m[2].matchAll(/-o (\w+)/g)].map((o) => o[1]);
      return { candidates: m[1].split(" ").filter(Boolean).sort(), options };
    },
    close: () => t.kill(),
  };
}

/** fish's candidates for each line (`complete -C`), without their descriptions, sorted. */
export async function fishCompletions(lines: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<string[][]> {
  const path = `${ENGINE.replace(/\/engine$/, "")}:${process.env.PATH}`;
  const quote = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const script = ["engine completion fish | source", ...lines.map((l, i) => `echo '<<${i}>>'; complete -C ${quote(l)}`), "echo '<<end>>'"].join("\n");
  const r = await runCommand("fish", ["--no-config", "-c", script], { env: { ...env, PATH: path }, cwd, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`fish exited ${r.code}: ${r.stderr}`);
  const parts = r.stdout.split(/<<(?:\d+|end)>>\n/).slice(1, -1);
  return parts.map((p) =>
    p
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t")[0])
      .sort(),
  );
}
