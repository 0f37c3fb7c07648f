/**
 * What completes a word: where its candidates come from (a `Source`), read from the command
 * itself where it says so and from two small tables where it cannot:
 * - a command's arguments come from its usage line (`CONTAINER [CONTAINER...]`,
 *   `NETWORK CONTAINER`, `SOURCE_IMAGE[:TAG] TARGET_IMAGE[:TAG]`), so that a new command's
 *   names complete without a line here;
 * - which containers a command takes (running ones for `exec`, stopped ones for `start`) and
 *   what a flag's value is (`--network`: networks) are facts the usage line does not hold:
 *   `CONTAINER_STATES` and `FLAG_VALUES`, as the Docker CLI completes them.
 */
import type { Command } from "../command.js";

/** Which containers: as `ps -a` shows their state. "up" is what `ps` without `-a` lists. */
export type ContainerState = "all" | "running" | "up" | "paused" | "stopped";

export type Source =
  /** Container names; `suffix` is added to each (`cp`'s `NAME:`, `-v`'s `VOLUME:`). */
  | { kind: "containers"; state: ContainerState; suffix?: string }
  | { kind: "images" | "networks" | "files" | "signals" | "env-names" }
  | { kind: "volumes"; suffix?: string }
  /** What the daemon's `/info` lists: its log, network and volume drivers, its runtimes. */
  | { kind: "log-drivers" | "network-drivers" | "volume-drivers" | "runtimes" }
  | { kind: "values"; values: readonly string[] }
  /** `inspect`: containers, images, networks and volumes, or those of `--type`. */
  | { kind: "objects" }
  /** The client's contexts (its configuration folder, not the daemon): `--context`, `context use`. */
  | { kind: "contexts" };

const values = (...list: string[]): Source => ({ kind: "values", values: list });
const FILES: Source = { kind: "files" };

/**
 * The containers each command takes, by its name in the registry; any other takes all. As the
 * Docker CLI 28 completes them: `exec`, `attach` and `pause` need one running and not paused,
 * `kill`, `stop`, `stats`, `top`, `wait` and `diff` one that is up, `rm` a stopped one unless
 * `--force`.
 */
const CONTAINER_STATES: Readonly<Record<string, ContainerState>> = {
  attach: "running",
  diff: "up",
  exec: "running",
  kill: "up",
  pause: "running",
  rm: "stopped",
  start: "stopped",
  stats: "up",
  stop: "up",
  top: "up",
  unpause: "paused",
  wait: "up",
};

function containerState(command: string, given: ReadonlyMap<string, string[]>): ContainerState {
  if (command === "rm" && given.has("force")) return "all";
  return CONTAINER_STATES[command] ?? "all";
}

/** A flag's value, by `"COMMAND --flag"` for one command, else by `"--flag"` for any. */
const FLAG_VALUES: Readonly<Record<string, Source | readonly Source[]>> = {
  "--build-arg": { kind: "env-names" },
  "--cidfile": FILES,
  "--config": FILES,
  "--context": { kind: "contexts" },
  "--env": { kind: "env-names" },
  "--env-file": FILES,
  "--file": FILES,
  "--iidfile": FILES,
  "--input": FILES,
  "--label-file": FILES,
  "--link": { kind: "containers", state: "running" },
  "--log-driver": { kind: "log-drivers" },
  "--log-level": values("debug", "info", "warn", "error", "fatal"),
  "--net": { kind: "networks" },
  "--network": { kind: "networks" },
  "--output": FILES,
  "--pull": values("always", "missing", "never"),
  "--restart": values("no", "always", "on-failure", "unless-stopped"),
  "--runtime": { kind: "runtimes" },
  "--signal": { kind: "signals" },
  "--stop-signal": { kind: "signals" },
  "--tlscacert": FILES,
  "--tlscert": FILES,
  "--tlskey": FILES,
  // a volume's name and ":" (then its path in the container), or a host path to bind
  "--volume": [{ kind: "volumes", suffix: ":" }, FILES],
  "--volumes-from": { kind: "containers", state: "all" },
  "inspect --type": values("container", "image", "network", "volume"),
  "network create --driver": { kind: "network-drivers" },
  "volume create --driver": { kind: "volume-drivers" },
};

export function flagValueSources(command: string, flag: string): Source[] {
  return [FLAG_VALUES[`${command} --${flag}`] ?? FLAG_VALUES[`--${flag}`] ?? []].flat();
}

/** The sources of each argument position, and of every position past them when the last repeats. */
export interface ArgumentSlots {
  slots: Source[][];
  repeat?: Source[];
}

/**
 * A usage word's source, or undefined for a word that names nothing to list (`NEW_NAME`,
 * `COMMAND`, `TERM`). A `GROUP create` command's word named after its group is the name of
 * what it creates (`network create NETWORK`), not an existing one.
 */
function wordSource(word: string, command: string, state: ContainerState): Source[] {
  if (/^NAME\|ID$/.test(word)) return [{ kind: "objects" }];
  const own = (group: string) => command === `${group} create`;
  const sources: Source[] = [];
  for (const alt of word.split("|")) {
    if (alt === "CONTAINER" && !own("container")) sources.push({ kind: "containers", state });
    else if (alt.startsWith("CONTAINER:")) sources.push({ kind: "containers", state, suffix: ":" });
    else if (/^(IMAGE|SOURCE_IMAGE|TARGET_IMAGE|REPOSITORY|NAME)$/.test(alt) && !own("image")) sources.push({ kind: "images" });
    else if (alt === "NETWORK" && !own("network")) sources.push({ kind: "networks" });
    else if (alt === "VOLUME" && !own("volume")) sources.push({ kind: "volumes" });
    // `context import CONTEXT` names the context it makes, as `create` does
    else if (alt === "CONTEXT" && !own("context") && command !== "context import") sources.push({ kind: "contexts" });
    else if (/^(PATH|file|FILE|SRC_PATH|DEST_PATH)$/.test(alt)) sources.push(FILES);
  }
  return sources;
}

/** Splits a usage line into its words, a bracketed group being one word (`[ps OPTIONS]`). */
function usageWords(line: string): string[] {
  const words: string[] = [];
  let depth = 0;
  let word = "";
  for (const c of line.replace(/\s*\|\s*/g, "|")) {
    if (/\s/.test(c) && depth === 0) {
      if (word) words.push(word);
      word = "";
      continue;
    }
    if (c === "[") depth++;
    if (c === "]") depth--;
    word += c;
  }
  if (word) words.push(word);
  return words;
}

/**
 * The argument positions of `command` (registered as `name`), from its usage. A second usage
 * line (`cp`'s other direction) adds its sources to the same positions.
 */
export function argumentSlots(name: string, command: Command, given: ReadonlyMap<string, string[]>): ArgumentSlots {
  const state = containerState(name, given);
  const result: ArgumentSlots = { slots: [] };
  for (const [n, line] of command.usage.split("\n").entries()) {
    // later lines repeat the program and the command's name: "\tengine cp [OPTIONS] ..."
    const words = usageWords(n === 0 ? line : line.trim().split(/\s+/).slice(1 + name.split(" ").length).join(" ")).filter((w) => w !== "[OPTIONS]");
    for (const [i, raw] of words.entries()) {
      const repeats = raw.includes("...");
      // the base word: `[SOURCE_IMAGE[:TAG]]` -> SOURCE_IMAGE, `[CONTAINER...]` -> CONTAINER
      const word = raw.replace(/^\[/, "").replace(/\.\.\.\]?$/, "").replace(/\[.*$/, "").replace(/\]$/, "");
      const sources = wordSource(word, name, state);
      if (repeats) {
        result.repeat = [...(result.repeat ?? []), ...sources];
        break;
      }
      result.slots[i] = [...(result.slots[i] ?? []), ...sources];
    }
  }
  return result;
}
