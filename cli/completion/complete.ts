/**
 * What `engine __complete WORDS...` answers: the candidates for the last of WORDS (the word
 * under the cursor, "" for a new one), reading the words before it as `engine` parses them:
 * global flags, a command (or a group and its subcommand) from the registry, the command's
 * flags as pflag reads them, then its arguments. Commands and flags come from the registry and
 * the command's own `flags` (only the command being completed is loaded); names come from the
 * daemon that the line's `-H`/`--tls*` (or ENGINE_HOST) reach.
 */
import type { Command } from "../command.js";
import { commands, findCommand, GROUPS, groupCommands } from "../commands/index.js";
import { parseFlags, type FlagSpec, type Parsed } from "../flags.js";
import { DEFAULT_CONTEXT } from "../context/current.js";
import { configDirOf, currentContextOf, GLOBAL_FLAGS, openConnection } from "../globals.js";
import { NameLookup } from "./names.js";
import { argumentSlots, flagValueSources, type Source } from "./sources.js";

export interface Candidate {
  value: string;
  description?: string;
}

export interface Completion {
  candidates: Candidate[];
  /** Let the shell add file names (for paths: `build PATH`, `--env-file`...). */
  files: boolean;
  /** No space after the candidate: more follows it (`cp web:`, `-v data:`). */
  nospace: boolean;
}

/** What the words before the current one say it is. */
type Want =
  | { flagsOf: readonly FlagSpec[] }
  | { commandsIn?: string }
  /** Names from sources; `prefix` is the `--flag=` typed before a value. */
  | { sources: Source[]; prefix: string }
  | { nothing: true };

interface Walked {
  /** The arguments among the words (not flags, not their values). */
  args: string[];
  /** Index of the first argument (or of the current word when there is none). */
  end: number;
  /** Flags ended: `--`, or the first argument where flags stop there. */
  ended: boolean;
  /** The flag whose value the current word is. */
  pending?: FlagSpec;
  /** The flags given, with their values (`"true"` for booleans). */
  given: Map<string, string[]>;
}

const HELP: FlagSpec = { name: "help", type: "bool", description: "Print usage" };

/** Reads the words from `start` to the current one (excluded) with `specs`, as flags.ts parses them. */
function walkFlags(words: readonly string[], start: number, specs: readonly FlagSpec[], interspersed: boolean): Walked {
  const long = new Map(specs.map((s) => [s.name, s]));
  const short = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const last = words.length - 1;
  const walked: Walked = { args: [], end: last, ended: false, given: new Map() };
  const note = (spec: FlagSpec, value: string) => walked.given.set(spec.name, [...(walked.given.get(spec.name) ?? []), value]);
  for (let i = start; i < last; i++) {
    const w = words[i];
    if (walked.ended || w === "-" || !w.startsWith("-")) {
      if (walked.args.length === 0 && !walked.ended) walked.end = i;
      walked.args.push(w);
      if (!interspersed) walked.ended = true;
      continue;
    }
    if (w === "--") {
      walked.ended = true;
      if (walked.args.length === 0) walked.end = i + 1;
      continue;
    }
    // the flag that takes the next word as its value, if any
    let needs: FlagSpec | undefined;
    if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const spec = long.get(w.slice(2, eq < 0 ? undefined : eq));
      if (spec && eq >= 0) note(spec, w.slice(eq + 1));
      else if (spec?.type === "bool") note(spec, "true");
      else needs = spec;
    } else {
      for (let j = 1; j < w.length; j++) {
        const spec = short.get(w[j]);
        if (!spec) break;
        if (spec.type === "bool") {
          note(spec, "true");
          continue;
        }
        if (j + 1 < w.length) note(spec, w.slice(j + 1).replace(/^=/, ""));
        else needs = spec;
        break;
      }
    }
    if (!needs) continue;
    if (i + 1 === last) return { ...walked, pending: needs };
    note(needs, words[++i]);
  }
  return walked;
}

/** The flag names for `current`: long ones always, a shorthand when `-` alone or itself is typed. */
function flagCandidates(specs: readonly FlagSpec[], current: string): Candidate[] {
  const out: Candidate[] = [];
  for (const s of [...specs, HELP]) {
    if (s.hidden) continue;
    out.push({ value: `--${s.name}`, description: s.description });
    if (s.short && (current === "-" || current === `-${s.short}`)) out.push({ value: `-${s.short}`, description: s.description });
  }
  return out;
}

/** The first words of every listed command (`ps`, `network`, `completion`), or a group's subcommands. */
function commandCandidates(group: string | undefined): Candidate[] {
  if (group !== undefined) return groupCommands(group).filter((c) => !c.entry.hidden).map((c) => ({ value: c.name, description: c.entry.description }));
  const seen = new Map<string, string>();
  for (const c of commands) {
    if (c.hidden) continue;
    for (const name of [c.name, ...(c.aliases ?? [])]) {
      const first = name.split(" ")[0];
      if (!seen.has(first)) seen.set(first, GROUPS[first] ?? c.description);
    }
  }
  return [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([value, description]) => ({ value, description }));
}

/** What to offer for the last word, with the global flags typed before the command. */
async function want(words: readonly string[]): Promise<{ want: Want; globals: readonly string[]; type?: string }> {
  const current = words[words.length - 1];
  const g = walkFlags(words, 0, GLOBAL_FLAGS, false);
  const globals = words.slice(0, g.end);
  const valueOf = (command: string, spec: FlagSpec, prefix = ""): Want => ({ sources: flagValueSources(command, spec.name), prefix });
  if (g.pending) return { globals, want: valueOf("", g.pending) };
  if (g.args.length === 0) return { globals, want: current.startsWith("-") ? { flagsOf: GLOBAL_FLAGS } : {} };
  const found = findCommand(g.args);
  if (!found || found.entry.hidden) {
    const group = g.args.length === 1 && !current.startsWith("-") && groupCommands(g.args[0]).length > 0;
    return { globals, want: group ? { commandsIn: g.args[0] } : { nothing: true } };
  }
  const name = found.entry.name;
  const command: Command = await found.entry.load();
  const c = walkFlags(words, g.end + found.used, command.flags, !command.stopAtFirstArg);
  const type = c.given.get("type")?.at(-1);
  if (c.pending) return { globals, type, want: valueOf(name, c.pending) };
  if (!c.ended && current.startsWith("--") && current.includes("=")) {
    const eq = current.indexOf("=");
    const spec = command.flags.find((s) => s.name === current.slice(2, eq));
    return { globals, type, want: spec && spec.type !== "bool" ? valueOf(name, spec, current.slice(0, eq + 1)) : { nothing: true } };
  }
  if (!c.ended && current.startsWith("-")) return { globals, want: { flagsOf: command.flags } };
  if (c.args.length >= (command.args?.max ?? Infinity)) return { globals, want: { nothing: true } };
  const slots = argumentSlots(name, command, c.given);
  return { globals, type, want: { sources: slots.slots[c.args.length] ?? slots.repeat ?? [], prefix: "" } };
}

/** The completion of the last of `words` (the words after the program's name). */
export async function complete(words: readonly string[], env: NodeJS.ProcessEnv): Promise<Completion> {
  const all = words.length ? words : [""];
  const current = all[all.length - 1];
  const { want: w, globals, type } = await want(all);
  const none: Completion = { candidates: [], files: false, nospace: false };
  const typedOn = (list: Candidate[]): Completion => ({ ...none, candidates: list.filter((c) => c.value.startsWith(current)) });
  if ("nothing" in w) return none;
  if ("flagsOf" in w) return typedOn(flagCandidates(w.flagsOf, current));
  if (!("sources" in w)) return typedOn(commandCandidates(w.commandsIn));
  if (w.sources.length === 0) return none;

  const typed = current.slice(w.prefix.length);
  const suffixed = w.sources.some((s) => "suffix" in s && s.suffix !== undefined);
  // a path inside a container (`cp web:/etc`, `-v data:/data`): nothing here knows those
  if (suffixed && typed.includes(":")) return none;
  let parsed: Parsed;
  try {
    parsed = parseFlags(globals, GLOBAL_FLAGS, false);
  } catch {
    parsed = parseFlags([], GLOBAL_FLAGS, false);
  }
  // names from the daemon the line would reach: its -H, its --context, or the current context
  const configDir = configDirOf(parsed, env);
  const lookup = new NameLookup(
    () => openConnection(parsed, env, configDir, currentContextOf(parsed, env, configDir)),
    () => contextNames(configDir),
  );
  try {
    const lists = await Promise.all(w.sources.map((s) => lookup.of(s, type)));
    const values = [...new Set(lists.flat())].filter((v) => v.startsWith(typed));
    return { candidates: values.map((v) => ({ value: w.prefix + v })), files: w.sources.some((s) => s.kind === "files"), nospace: suffixed };
  } finally {
    await lookup.close();
  }
}

/** "default" and the stored contexts' names, sorted; none when the store cannot be read. */
async function contextNames(configDir: string): Promise<string[]> {
  try {
    const { ContextStore } = await import("../context/store.js");
    return [DEFAULT_CONTEXT, ...new ContextStore(configDir).list().map((c) => c.name).sort()];
  } catch {
    return [DEFAULT_CONTEXT];
  }
}
