/**
 * One instruction of a stage, done as Docker's classic builder does it. Every instruction makes
 * an image (the cache is asked first: ` ---> Using cache`); those that change only the
 * configuration make one with an empty layer and a `#(nop)` history entry (through a container
 * that never runs, as Docker's builder commits them), `WORKDIR` makes its folder in such a
 * container, `COPY`/`ADD` write their files into a layer of the build's own, `RUN` runs a container.
 */
import { errors } from "../../core/errors.js";
import type { StageArgs } from "../../core/build/build-args.js";
import { commandOf, configInstruction, shellOf, workdirOf } from "../../core/build/config-instruction.js";
import { expand, expandWords } from "../../core/build/shell-lex.js";
import type { ContainerConfig } from "../../core/images/image-config.js";
import type { Image } from "../../core/images/image-store.js";
import type { BuildCache } from "./build-cache.js";
import { commitStep, type BuildState, type StepImage } from "./build-image.js";
import type { BuildOutput } from "./build-output.js";
import type { BuildOptions } from "./build-options.js";
import { copyStep, type CopyDeps } from "./copy-step.js";
import type { EscapeChar, Instruction } from "../../core/build/dockerfile-types.js";
import { configInContainer, runInContainer, workdirInContainer, type RunDeps } from "./run-step.js";
import { rmSync } from "node:fs";
import type { EngineHooks } from "../../core/hooks.js";
import { imageEvent } from "../images/image-events.js";

export interface StepDeps extends RunDeps, CopyDeps {
  hooks: EngineHooks;
}

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

/** Variables as substitution sees them now. */
const lookup = (ctx: StepContext) => ctx.args.lookup(ctx.state.config.Env ?? []);
export const word = (ctx: StepContext, s: string): string => expand(s, lookup(ctx), ctx.escape);
const words = (ctx: StepContext, list: readonly string[]): string[] => list.flatMap((s) => expandWords(s, lookup(ctx), ctx.escape));

/** What a step made for its image: a layer, and the container it was committed through, released after the commit. */
type Made = Omit<StepImage, "containerConfig" | "config"> & { release?: (committed: boolean) => Promise<void> };

/** Probes the cache for `step`, else makes its image with `make`; the stage moves on to it. */
export async function stepImage(ctx: StepContext, probe: ContainerConfig, next: ContainerConfig, make: () => Promise<Made>): Promise<void> {
  const cached = ctx.cache.find(ctx.state.image, probe);
  let image: Image;
  if (cached) {
    ctx.out.arrow("Using cache");
    image = cached;
    ctx.cache.hit(image);
  } else {
    const { release, ...made } = await make();
    let committed = false;
    try {
      image = await commitStep(ctx.deps.images, ctx.state, { ...made, containerConfig: probe, config: next });
      committed = true;
      ctx.cache.made(image);
      // Docker 27 and later tell of every image a step makes (an image `create` event, named by
      // its ID), so that a build without a tag is seen too; a cache hit makes none
      ctx.deps.hooks.event.call(imageEvent(image, "create", image.id));
    } finally {
      if (made.layerTar) rmSync(made.layerTar, { force: true });
      // the step's container goes after the commit, as Docker's builder removes it
      await release?.(committed);
    }
  }
  ctx.state.image = image;
  ctx.state.config = next;
  if (!ctx.inTriggers) ctx.out.arrow(image.id.slice(7, 19));
}

/**
 * A step that changes only the configuration: `#(nop)  <comment>`, an empty layer, committed
 * through a container made for it (run-step.ts) as Docker's builder does, from no image in a
 * stage `FROM scratch` that has none yet, as there.
 */
async function configOnly(ctx: StepContext, next: ContainerConfig, comment: string): Promise<void> {
  // (SHELL names itself with the new shell, as Docker records it)
  const probe = { ...next, Cmd: [...shellOf(next), "#(nop) ", comment] };
  await stepImage(ctx, probe, next, () => configInContainer(ctx.deps, ctx.out, stepContainer(ctx, probe)));
}

/** The request for a step's container that never runs, made with the step's configuration `probe`. */
function stepContainer(ctx: StepContext, probe: ContainerConfig) {
  const { hostConfig, remove, forceRemove } = ctx.opts;
  return { image: ctx.state.image, config: probe, hostConfig, remove, forceRemove, signal: ctx.signal };
}

export async function dispatch(ctx: StepContext, i: Instruction): Promise<void> {
  const c = ctx.state.config;
  // Docker tells of a HEALTHCHECK that replaces one (not NONE), its test as Go prints a list
  const previous = (c.Healthcheck as { Test?: string[] } | undefined)?.Test;
  if (i.keyword === "healthcheck" && previous?.length && previous[0] !== "NONE") ctx.out.stream(`Note: overriding previous HEALTHCHECK: [${previous.join(" ")}]\n`);
  const changed = configInstruction(c, i, { word: (s) => word(ctx, s), words: (list) => words(ctx, list) }, ctx.cmdSet);
  if (changed) {
    if (i.keyword === "cmd") ctx.cmdSet = true;
    return configOnly(ctx, changed.config, changed.comment);
  }
  switch (i.keyword) {
    case "maintainer": {
      ctx.state.author = i.args.join(" ");
      return configOnly(ctx, c, `MAINTAINER ${ctx.state.author}`);
    }
    case "arg": {
      const pairs = (i.argDefinitions ?? []).map(({ name, value }) => [word(ctx, name), value === undefined ? undefined : word(ctx, value)] as const);
      for (const [k, v] of pairs) ctx.args.declare(k, v);
      return configOnly(ctx, c, `ARG ${pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join(" ")}`);
    }
    case "workdir": {
      const dir = workdirOf(c.WorkingDir, word(ctx, i.args.join(" ")));
      const next = { ...c, WorkingDir: dir };
      const probe = { ...next, Cmd: [...shellOf(c), `#(nop) WORKDIR ${dir}`] };
      return stepImage(ctx, probe, next, () => workdirInContainer(ctx.deps, ctx.out, stepContainer(ctx, probe)));
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

async function runStep(ctx: StepContext, i: Instruction): Promise<void> {
  const c = ctx.state.config;
  // the classic builder runs no RUN with a flag (--mount, --network): they are BuildKit's
  const flag = i.mounts?.length ? "mount" : Object.keys(i.flags)[0];
  if (flag !== undefined) throw errors.buildRequiresBuildKit(flag);
  if (!ctx.state.image) throw errors.buildNoSourceImage("RUN");
  const cmd = commandOf(c, i);
  const runEnv = ctx.args.runEnv(c.Env ?? []);
  const shown = ctx.args.historyEnv(c.Env ?? []);
  const saveCmd = runEnv.length > 0 ? [`|${shown.length}`, ...shown, ...cmd] : cmd;
  const probe: ContainerConfig = { ...c, Cmd: saveCmd, Entrypoint: null };
  const image = ctx.state.image;
  await stepImage(ctx, probe, c, async () => {
    return runInContainer(ctx.deps, ctx.out, {
      image, config: c, command: cmd, argsEnv: runEnv, hostConfig: ctx.opts.hostConfig,
      remove: ctx.opts.remove, forceRemove: ctx.opts.forceRemove, signal: ctx.signal,
    });
  });
}
