/**
 * What parseDockerfile returns: the vocabulary of the build code.
 *
 * - A *physical line* is a line of the file; a *logical line* is one instruction's text once the
 *   continuations (the escape character at the end of a line) are joined.
 * - An *instruction* is one logical line, parsed: its keyword, its `--name=value` flags and its
 *   arguments, split the way Docker's classic builder splits that keyword's arguments. Arguments
 *   are *raw*: quotes and `$variables` are still in them; the executor substitutes (shell-lex.ts)
 *   where Docker does, which also removes the quotes.
 * - A *stage* starts at a FROM and holds the instructions up to the next FROM. ARGs before the
 *   first FROM are the *meta ARGs*: they may be used in FROM lines only.
 * - A *step* is what Docker numbers in "Step N/M : <original>": every instruction of the file, the
 *   meta ARGs and the FROMs included (once --target has cut the stages after the target).
 */

export type EscapeChar = "\\" | "`";

/** HEALTHCHECK, as the image config carries it (durations in nanoseconds, 0 when not given). */
export interface HealthcheckSpec {
  /** ["NONE"], ["CMD", ...argv] (exec form) or ["CMD-SHELL", "<command>"] (shell form). */
  test: string[];
  interval: number;
  timeout: number;
  startPeriod: number;
  startInterval: number;
  retries: number;
}

/** An ARG's name and its default, both raw (substituted at dispatch, as Docker does). */
export interface ArgDefinition {
  name: string;
  /** Undefined for `ARG name` (no default), "" for `ARG name=`. */
  value?: string;
}

export interface Instruction {
  /** Lower case: "from", "run", "copy"... */
  keyword: string;
  /** The instruction's text as Docker prints it in "Step N/M : <original>": the joined continuation
   *  lines, with comment lines dropped and the outer whitespace trimmed. */
  original: string;
  /** 1-based line where the instruction starts, and where it ends (continuations). */
  line: number;
  endLine: number;
  /** The `--name=value` flags given, among those the keyword accepts (value "" for `--name=`). */
  flags: Record<string, string>;
  /** The arguments, raw, split as Docker splits this keyword's (see README.md). ENV and LABEL:
   *  [key1, value1, key2, value2, ...]; ONBUILD: [triggerKeyword, ...triggerArgs]. */
  args: string[];
  /** The arguments were a JSON array (exec form of RUN/CMD/ENTRYPOINT/SHELL/HEALTHCHECK CMD,
   *  JSON form of ADD/COPY/VOLUME). */
  json: boolean;
  /** ENV and LABEL: the [key, value] pairs of `args`, raw. */
  pairs?: [string, string][];
  /** ARG: the names and defaults, raw. */
  argDefinitions?: ArgDefinition[];
  /** RUN: the values of its repeatable `--mount` flag (the classic builder refuses them at dispatch). */
  mounts?: string[];
  /** HEALTHCHECK: the parsed configuration. */
  healthcheck?: HealthcheckSpec;
  /** ONBUILD: the trigger, parsed like a line of its own (its arguments are not checked until it
   *  runs in a child build, as in Docker), and the text stored in the image's OnBuild list. */
  trigger?: Instruction;
  expression?: string;
  /** Not substituted: a step the builder adds itself (a `--label` option's LABEL), taken as given. */
  verbatim?: boolean;
}

export interface Stage {
  /** 0-based position among the stages (COPY --from=<n> names a stage by it). */
  index: number;
  /** The FROM instruction. */
  from: Instruction;
  /** FROM's image argument, raw: the meta ARGs are substituted in it at dispatch. */
  baseName: string;
  /** The name after AS, lower-cased, if any. */
  name?: string;
  /** FROM --platform, raw. */
  platform?: string;
  /** The stage's instructions after FROM. */
  instructions: Instruction[];
}

export interface ParsedDockerfile {
  escape: EscapeChar;
  /** The `# syntax=` directive, if given: the classic builder ignores it (no frontend image). */
  syntax?: string;
  /** Docker's parser warnings, printed before the first step (one string each, as Docker words
   *  them: the empty continuation lines). */
  warnings: string[];
  /** The ARG instructions before the first FROM. */
  metaArgs: Instruction[];
  stages: Stage[];
  /** Every top-level instruction in file order (meta ARGs, FROMs and the rest): the steps. */
  instructions: Instruction[];
}
