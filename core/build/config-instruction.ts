/**
 * The instructions that change only an image's configuration (ENV, LABEL, EXPOSE, USER, VOLUME,
 * STOPSIGNAL, HEALTHCHECK, SHELL, ONBUILD, CMD, ENTRYPOINT, and WORKDIR's configuration part),
 * as Docker's classic builder dispatches them. Pure: the caller gives the substitution (`Words`:
 * the build's arguments and environment in a build, the configuration's environment for a
 * commit's or an import's `--change`, as Docker's BuildFromConfig runs the same dispatch), and
 * gets the next configuration with the history comment a build records.
 */
import { parseHealthcheckInstruction } from "../containers/healthcheck.js";
import { mergeEnv } from "../containers/command.js";
import { parseSignal, signalNumberOf } from "../containers/signals.js";
import { errors } from "../errors.js";
import type { ContainerConfig } from "../images/image-config.js";
import type { Instruction } from "./dockerfile-types.js";
import { goHealthConfig, goList, goQuoteList } from "./go-format.js";

/** Variable substitution of one word (`word`) or of words that may split (`words`). */
export interface Words {
  word(s: string): string;
  words(list: readonly string[]): string[];
}

const DEFAULT_SHELL = ["/bin/sh", "-c"];
export const shellOf = (c: ContainerConfig): string[] => ((c.Shell as string[] | undefined)?.length ? (c.Shell as string[]) : DEFAULT_SHELL);

/** `CMD`/`ENTRYPOINT`/`RUN` words: the exec form as given, the shell form through the configuration's shell. */
export const commandOf = (c: ContainerConfig, i: Instruction): string[] => (i.json ? i.args : [...shellOf(c), i.args.join(" ")]);

function exposedPorts(specs: readonly string[]): string[] {
  const out: string[] = [];
  for (const spec of specs) {
    const m = /^(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/i.exec(spec);
    if (!m) throw errors.buildInvalidInstruction(`Invalid containerPort: ${spec}`);
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    if (last < first || last > 65535) throw errors.buildInvalidInstruction(`Invalid containerPort: ${spec.split("/")[0]}`);
    for (let p = first; p <= last; p++) out.push(`${p}/${(m[3] ?? "tcp").toLowerCase()}`);
  }
  return out;
}

/** `WORKDIR`: absolute as given, else from the current one; cleaned. */
export function workdirOf(current: string | undefined, dir: string): string {
  const joined = dir.startsWith("/") ? dir : `${current || "/"}/${dir}`;
  const parts: string[] = [];
  for (const p of joined.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return `/${parts.join("/")}`;
}

/**
 * The configuration after `i`, with the history comment of its step, when `i` changes only the
 * configuration; undefined for every other instruction. `cmdSet`: a CMD came before in this
 * stage (or these changes): an ENTRYPOINT keeps it, else clears the inherited one.
 */
export function configInstruction(c: ContainerConfig, i: Instruction, w: Words, cmdSet: boolean): { config: ContainerConfig; comment: string } | undefined {
  switch (i.keyword) {
    case "env": {
      const pairs = (i.pairs ?? []).map(([k, v]) => [w.word(k), w.word(v)] as const);
      const env = mergeEnv(c.Env ?? [], pairs.map(([k, v]) => `${k}=${v}`));
      return { config: { ...c, Env: env }, comment: `ENV ${pairs.map(([k, v]) => `${k}=${v}`).join(" ")}` };
    }
    case "label": {
      const pairs = (i.pairs ?? []).map(([k, v]) => (i.verbatim ? [k, v] : [w.word(k), w.word(v)]) as readonly [string, string]);
      const labels = { ...(c.Labels ?? {}) };
      for (const [k, v] of pairs) labels[k] = v;
      return { config: { ...c, Labels: labels }, comment: `LABEL ${pairs.map(([k, v]) => `${k}=${v}`).join(" ")}` };
    }
    case "expose": {
      const given = w.words(i.args);
      const exposed = { ...(c.ExposedPorts ?? {}) };
      for (const p of exposedPorts(given)) exposed[p] = {};
      // (the history names the ports as written, substituted: `EXPOSE 80 8000-8002/udp`, as Docker's)
      return { config: { ...c, ExposedPorts: exposed }, comment: `EXPOSE ${given.join(" ")}` };
    }
    case "user": {
      const user = w.word(i.args.join(" "));
      return { config: { ...c, User: user }, comment: `USER ${user}` };
    }
    case "volume": {
      const list = i.json ? i.args.map((a) => w.word(a)) : w.words(i.args);
      if (list.length === 0) throw errors.buildInvalidInstruction("VOLUME requires at least one argument");
      const volumes = { ...(c.Volumes ?? {}) };
      for (const v of list) {
        if (v.trim() === "") throw errors.buildInvalidInstruction("VOLUME specified can not be an empty string");
        volumes[v.trim()] = {};
      }
      return { config: { ...c, Volumes: volumes }, comment: `VOLUME ${goList(list)}` };
    }
    case "stopsignal": {
      const signal = w.word(i.args[0] ?? "");
      // Go's signal.ParseSignal: any integer but 0, or a signal's name (with or without SIG, any case)
      const valid = /^[+-]?\d+$/.test(signal) ? signalNumberOf(signal) !== undefined : parseSignal(signal) !== undefined;
      if (!valid) throw errors.buildInvalidInstruction(`Invalid signal: ${signal}`);
      return { config: { ...c, StopSignal: signal }, comment: `STOPSIGNAL ${signal}` };
    }
    case "healthcheck": {
      let hc;
      try {
        // read again from the text: the parser's spec stops at 20.10's flags, and --start-interval is newer
        hc = parseHealthcheckInstruction(i.original.replace(/^\S+\s*/, ""));
      } catch (err) {
        throw errors.buildInvalidInstruction((err as Error).message);
      }
      return { config: { ...c, Healthcheck: hc }, comment: `HEALTHCHECK ${goHealthConfig(hc)}` };
    }
    case "shell": {
      if (!i.json) throw errors.buildInvalidInstruction("SHELL requires the arguments to be in JSON form");
      return { config: { ...c, Shell: i.args }, comment: `SHELL ${goList(i.args)}` };
    }
    case "onbuild": {
      const trigger = i.expression ?? "";
      return { config: { ...c, OnBuild: [...((c.OnBuild as string[] | undefined) ?? []), trigger] }, comment: `ONBUILD ${trigger}` };
    }
    case "cmd": {
      const cmd = commandOf(c, i);
      return { config: { ...c, Cmd: cmd }, comment: `CMD ${goQuoteList(cmd)}` };
    }
    case "entrypoint": {
      const entry = commandOf(c, i);
      return { config: { ...c, Entrypoint: entry, ...(cmdSet ? {} : { Cmd: null }) }, comment: `ENTRYPOINT ${goQuoteList(entry)}` };
    }
    default:
      return undefined;
  }
}
