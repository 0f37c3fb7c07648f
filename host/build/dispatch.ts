/**
 * One instruction of a stage, done as Docker's classic builder does it. Every instruction makes
 * an image (the cache is asked first: ` ---> Using cache`); those that change only the
 * configuration make one with an empty layer and a `#(nop)` history entry, `WORKDIR` makes its
 * folder, `COPY`/`ADD` write their files into a layer of the build's own, `RUN` runs a container.
 */
import { parseHealthcheckInstruction } from "../../core/containers/healthcheck.js";
import { mergeEnv } from "../../core/containers/command.js";
import { errors } from "../../core/errors.js";
import type { StageArgs } from "../../core/build/build-args.js";
import { goHealthConfig, goList, goQuoteList } from "../../core/build/go-format.js";
import { expand, expandWords } from "../../core/build/shell-lex.js";
import type { ContainerConfig } from "../../core/images/image-config.js";
import type { Image } from "../../core/images/image-store.js";
import type { BuildCache } from "./build-cache.js";
import { commitStep, type BuildState, type StepImage } from "./build-image.js";
import type { BuildOutput } from "./build-output.js";
import type { BuildOptions } from "./build-options.js";
import { copyStep, type CopyDeps } from "./copy-step.js";
import type { EscapeChar, Instruction } from "../../core/build/dockerfile-types.js";
import { runInContainer, type RunDeps } from "./run-step.js";
import { makeWorkdir } from "./workdir-step.js";
import { rmSync } from "node:fs";

export interface StepDeps extends RunDeps, CopyDeps {}

export interface StepContext {
  deps: StepDeps;
  state: BuildState;
  args: StageArgs;
  escape: EscapeChar;
  out: BuildOutput;
  cache: BuildCache;
  opts: BuildOptions;
  /** The build context's folder. */
  contextRoot: string;
  /** An earlier stage's image by name or index, for `COPY --from`. */
  stageImage: (ref: string) => Image | undefined;
  /** An image by name, pulled when missing (`COPY --from=<image>`). */
  imageFor: (ref: string) => Promise<Image>;
  /** A CMD was given in this stage (an ENTRYPOINT after it keeps it). */
  cmdSet: boolean;
  /** The base image's ONBUILD triggers are running: their steps print no image ID of their own. */
  inTriggers?: boolean;
  signal: AbortSignal;
}

const DEFAULT_SHELL = ["/bin/sh", "-c"];
export const shellOf = (c: ContainerConfig): string[] => ((c.Shell as string[] | undefined)?.length ? (c.Shell as string[]) : DEFAULT_SHELL);

/** Variables as substitution sees them now. */
const lookup = (ctx: StepContext) => ctx.args.lookup(ctx.state.config.Env ?? []);
export const word = (ctx: StepContext, s: string): string => expand(s, lookup(ctx), ctx.escape);
const words = (ctx: StepContext, list: readonly string[]): string[] => list.flatMap((s) => expandWords(s, lookup(ctx), ctx.escape));

/** Probes the cache for `step`, else makes its image with `make`; the stage moves on to it. */
export async function stepImage(ctx: StepContext, probe: ContainerConfig, next: ContainerConfig, make: () => Promise<Omit<StepImage, "containerConfig" | "config">>): Promise<void> {
  const cached = ctx.cache.find(ctx.state.image, probe);
  let image: Image;
  if (cached) {
    ctx.out.arrow("Using cache");
    image = cached;
    ctx.cache.hit(image);
  } else {
    const made = await make();
    try {
      image = await commitStep(ctx.deps.images, ctx.state, { ...made, containerConfig: probe, config: next });
    } finally {
      if (made.layerTar) rmSync(made.layerTar, { force: true });
    }
    ctx.cache.made(image);
  }
  ctx.state.image = image;
  ctx.state.config = next;
  if (!ctx.inTriggers) ctx.out.arrow(image.id.slice(7, 19));
}

/** A step that changes only the configuration: `#(nop)  <comment>`, an empty layer. */
async function configOnly(ctx: StepContext, next: ContainerConfig, comment: string): Promise<void> {
  // (SHELL names itself with the new shell, as Docker records it)
  const probe = { ...next, Cmd: [...shellOf(next), "#(nop) ", comment] };
  await stepImage(ctx, probe, next, async () => ({}));
}

/** `CMD`/`ENTRYPOINT`/`RUN` words: the exec form as given, the shell form through the stage's shell. */
const command = (ctx: StepContext, i: Instruction): string[] => (i.json ? i.args : [...shellOf(ctx.state.config), i.args.join(" ")]);

function exposedPorts(specs: readonly string[]): string[] {
  const out: string[] = [];
  for (const spec of specs) {
    const m = /^(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/i.exec(spec);
    if (!m) throw errors.buildInvalidInstruction(`Invalid containerPort: ${spec.split("/")[0]}`);
    const first = Number(m[1]);
    const last = m[2] ? Number(m[2]) : first;
    if (last < first || last > 65535) throw errors.buildInvalidInstruction(`Invalid containerPort: ${spec.split("/")[0]}`);
    for (let p = first; p <= last; p++) out.push(`${p}/${(m[3] ?? "tcp").toLowerCase()}`);
  }
  return out;
}

export async function dispatch(ctx: StepContext, i: Instruction): Promise<void> {
  const c = ctx.state.config;
  switch (i.keyword) {
    case "env": {
      const pairs = (i.pairs ?? []).map(([k, v]) => [word(ctx, k), word(ctx, v)] as const);
      const env = mergeEnv(c.Env ?? [], pairs.map(([k, v]) => `${k}=${v}`));
      return configOnly(ctx, { ...c, Env: env }, `ENV ${pairs.map(([k, v]) => `${k}=${v}`).join(" ")}`);
    }
    case "label": {
      const pairs = (i.pairs ?? []).map(([k, v]) => (i.verbatim ? [k, v] : [word(ctx, k), word(ctx, v)]) as readonly [string, string]);
      const labels = { ...(c.Labels ?? {}) };
      for (const [k, v] of pairs) labels[k] = v;
      return configOnly(ctx, { ...c, Labels: labels }, `LABEL ${pairs.map(([k, v]) => `${k}=${v}`).join(" ")}`);
    }
    case "maintainer": {
      ctx.state.author = i.args.join(" ");
      return configOnly(ctx, c, `MAINTAINER ${ctx.state.author}`);
    }
    case "expose": {
      const given = words(ctx, i.args);
      const exposed = { ...(c.ExposedPorts ?? {}) };
      for (const p of exposedPorts(given)) exposed[p] = {};
      // (the history names the ports as written, substituted: `EXPOSE 80 8000-8002/udp`, as Docker's)
      return configOnly(ctx, { ...c, ExposedPorts: exposed }, `EXPOSE ${given.join(" ")}`);
    }
    case "user":
      return configOnly(ctx, { ...c, User: word(ctx, i.args.join(" ")) }, `USER ${word(ctx, i.args.join(" "))}`);
    case "volume": {
      const list = i.json ? i.args.map((a) => word(ctx, a)) : words(ctx, i.args);
      if (list.length === 0) throw errors.buildInvalidInstruction("VOLUME requires at least one argument");
      const volumes = { ...(c.Volumes ?? {}) };
      for (const v of list) {
        if (v.trim() === "") throw errors.buildInvalidInstruction("VOLUME specified can not be an empty string");
        volumes[v.trim()] = {};
      }
      return configOnly(ctx, { ...c, Volumes: volumes }, `VOLUME ${goList(list)}`);
    }
    case "stopsignal": {
      const signal = word(ctx, i.args[0] ?? "");
      if (!/^(SIG)?[A-Z0-9+-]+$/i.test(signal)) throw errors.buildInvalidInstruction(`Invalid signal: ${signal}`);
      return configOnly(ctx, { ...c, StopSignal: signal }, `STOPSIGNAL ${signal}`);
    }
    case "healthcheck": {
      let hc;
      try {
        // read again from the text: the parser's spec stops at 20.10's flags, and --start-interval is newer
        hc = parseHealthcheckInstruction(i.original.replace(/^\S+\s*/, ""));
      } catch (err) {
        throw errors.buildInvalidInstruction((err as Error).message);
      }
      return configOnly(ctx, { ...c, Healthcheck: hc }, `HEALTHCHECK ${goHealthConfig(hc)}`);
    }
    case "shell": {
      if (!i.json) throw errors.buildInvalidInstruction("SHELL requires the arguments to be in JSON form");
      return configOnly(ctx, { ...c, Shell: i.args }, `SHELL ${goList(i.args)}`);
    }
    case "onbuild": {
      const trigger = i.expression ?? "";
      return configOnly(ctx, { ...c, OnBuild: [...((c.OnBuild as string[] | undefined) ?? []), trigger] }, `ONBUILD ${trigger}`);
    }
    case "arg": {
      const pairs = (i.argDefinitions ?? []).map(({ name, value }) => [word(ctx, name), value === undefined ? undefined : word(ctx, value)] as const);
      for (const [k, v] of pairs) ctx.args.declare(k, v);
      return configOnly(ctx, c, `ARG ${pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join(" ")}`);
    }
    case "cmd": {
      ctx.cmdSet = true;
      const cmd = command(ctx, i);
      return configOnly(ctx, { ...c, Cmd: cmd }, `CMD ${goQuoteList(cmd)}`);
    }
    case "entrypoint": {
      const entry = command(ctx, i);
      return configOnly(ctx, { ...c, Entrypoint: entry, ...(ctx.cmdSet ? {} : { Cmd: null }) }, `ENTRYPOINT ${goQuoteList(entry)}`);
    }
    case "workdir": {
      const dir = workdirOf(c.WorkingDir, word(ctx, i.args.join(" ")));
      const next = { ...c, WorkingDir: dir };
      const probe = { ...next, Cmd: [...shellOf(c), `#(nop) WORKDIR ${dir}`] };
      return stepImage(ctx, probe, next, async () => ({ layerTar: await makeWorkdir(ctx.deps, ctx.state.image, dir) }));
    }
    case "run":
      return runStep(ctx, i);
    case "copy":
    case "add":
      return copyStep(ctx, i);
    default:
      throw errors.buildInvalidInstruction(`unknown instruction: ${i.keyword.toUpperCase()}`);
  }
}

/** `WORKDIR`: absolute as given, else from the current one; cleaned. */
function workdirOf(current: string | undefined, dir: string): string {
  const joined = dir.startsWith("/") ? dir : `${current || "/"}/${dir}`;
  const parts: string[] = [];
  for (const p of joined.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return `/${parts.join("/")}`;
}

async function runStep(ctx: StepContext, i: Instruction): Promise<void> {
  const c = ctx.state.config;
  if (!ctx.state.image) throw errors.buildNoSourceImage("RUN");
  const cmd = command(ctx, i);
  const runEnv = ctx.args.runEnv(c.Env ?? []);
  const shown = ctx.args.historyEnv(c.Env ?? []);
  const saveCmd = runEnv.length > 0 ? [`|${shown.length}`, ...shown, ...cmd] : cmd;
  const probe: ContainerConfig = { ...c, Cmd: saveCmd, Entrypoint: null };
  const image = ctx.state.image;
  await stepImage(ctx, probe, c, async () => {
    const { layerTar, containerId } = await runInContainer(ctx.deps, ctx.out, {
      image, config: c, command: cmd, argsEnv: runEnv, hostConfig: ctx.opts.hostConfig,
      remove: ctx.opts.remove, forceRemove: ctx.opts.forceRemove, signal: ctx.signal,
    });
    return { layerTar, containerId };
  });
}
