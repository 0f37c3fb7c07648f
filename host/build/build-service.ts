/**
 * Builds an image from a parsed Dockerfile and its context, as Docker's classic builder does:
 * the meta `ARG`s, then each stage up to the target, one numbered step per instruction
 * (`Step 3/9 : COPY . /app`), each step an image on the last (dispatch.ts), the stage's image
 * announced (`{"aux":{"ID":...}}`) when it ends, and the last one tagged.
 *
 * Base images come from the image store, pulled when missing or when asked (`pull`), their pull
 * progress in the build's stream. A stage's `ONBUILD` triggers of its base run right after its
 * `FROM`. The build's own layers are removed whatever happens (scratch-layer.ts); so are the
 * RUN containers (run-step.ts says when).
 */
import { BuildArgs } from "../../core/build/build-args.js";
import { expand } from "../../core/build/shell-lex.js";
import { errors } from "../../core/errors.js";
import type { ContainerConfig } from "../../core/images/image-config.js";
import type { Image } from "../../core/images/image-store.js";
import { familiarName, formatReference, parseReference } from "../../core/images/reference.js";
import { imageTagEvent } from "../images/image-events.js";
import type { Emit } from "../images/progress.js";
import { hostPlatform } from "../registry/manifests.js";
import { BuildCache } from "./build-cache.js";
import type { BuildCacheLedger, CacheUse } from "./cache-ledger.js";
import type { BuildState } from "./build-image.js";
import type { BuildOptions } from "./build-options.js";
import type { BuildOutput } from "./build-output.js";
import { dispatch, type StepContext, type StepDeps } from "./dispatch.js";
import type { Instruction, ParsedDockerfile } from "../../core/build/dockerfile-types.js";
import { parseTrigger, selectStages } from "../../core/build/dockerfile-parse.js";
import { removeLeftoverLayers } from "./scratch-layer.js";

export interface BuildDeps extends StepDeps {
  /** The build cache's record: what each build made, used and holds (cache-ledger.ts). */
  ledger?: BuildCacheLedger;
  /** Pulls `reference` (full) with its progress into `emit`. */
  pull: (reference: string, opts: BuildOptions, emit: Emit, signal: AbortSignal) => Promise<void>;
}

const DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export class BuildService {
  constructor(private readonly deps: BuildDeps) {}

  /** At daemon start: what a killed build left (its layers and their mounts). */
  recover(): Promise<number> {
    return removeLeftoverLayers(this.deps);
  }

  /** Runs the build; resolves with the image's ID. */
  async build(df: ParsedDockerfile, contextRoot: string, opts: BuildOptions, out: BuildOutput, signal: AbortSignal): Promise<string> {
    const use = this.deps.ledger?.track();
    try {
      return await this.run(df, contextRoot, opts, out, signal, use);
    } finally {
      use?.end();
    }
  }

  private async run(df: ParsedDockerfile, contextRoot: string, opts: BuildOptions, out: BuildOutput, signal: AbortSignal, use: CacheUse | undefined): Promise<string> {
    const stages = selectStages(df, opts.target);
    const labels = Object.entries(opts.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // (a copy of the last stage: the parsed file stays as it was)
    if (labels.length > 0) stages[stages.length - 1] = { ...stages[stages.length - 1], instructions: [...stages[stages.length - 1].instructions, ...labels.map(labelInstruction)] };
    const total = df.metaArgs.length + stages.reduce((n, s) => n + 1 + s.instructions.length, 0);
    let step = 0;
    const args = new BuildArgs(opts.buildArgs);
    for (const meta of df.metaArgs) {
      out.step(++step, total, meta.original);
      for (const { name, value } of meta.argDefinitions ?? []) args.declareMeta(name, value === undefined ? undefined : expand(value, (n) => args.metaLookup(n), df.escape));
    }
    const cache = new BuildCache(this.deps.images, opts.cacheFrom, opts.noCache, use);
    const built: Image[] = [];
    const byName = new Map<string, Image>();
    let current = 0;
    const stageImage = (ref: string): Image | undefined => {
      if (!/^\d+$/.test(ref)) return byName.get(ref);
      // an index names an earlier stage only, never an image to pull
      if (Number(ref) >= current) throw errors.buildInvalidFrom(ref, "refers to current build stage or a later one");
      const image = built[Number(ref)];
      if (!image) throw errors.buildInvalidFrom(ref, "the stage made no image");
      return image;
    };
    const emit: Emit = (m) => out.progress(m);
    const imageFor = async (ref: string): Promise<Image> => this.baseImage(ref, opts, emit, signal);
    let last: Image | undefined;
    for (const [index, stage] of stages.entries()) {
      current = index;
      out.step(++step, total, stage.from.original);
      const baseName = expand(stage.baseName, (n) => args.metaLookup(n), df.escape);
      const base = baseName.toLowerCase() === "scratch" ? undefined : (byName.get(baseName.toLowerCase()) ?? (await imageFor(baseName)));
      if (base) use?.hold(base.id);
      const state = stateFrom(base);
      const ctx: StepContext = {
        deps: this.deps, state, args: args.stage(), escape: df.escape, out, cache, opts, contextRoot, stageImage, imageFor, cmdSet: false, signal,
      };
      const triggers = (base?.config.config?.OnBuild as string[] | undefined) ?? [];
      if (triggers.length > 0) {
        out.stream(`# Executing ${triggers.length} build trigger${triggers.length > 1 ? "s" : ""}\n`);
        state.config = { ...state.config, OnBuild: null };
        // Docker prints no image ID per trigger: the stage's one comes once they all ran
        ctx.inTriggers = true;
        for (const text of triggers) await dispatch(ctx, parseTrigger(text));
        ctx.inTriggers = false;
      }
      out.arrow(state.image ? state.image.id.slice(7, 19) : "");
      for (const instruction of stage.instructions) {
        if (signal.aborted) throw errors.buildCancelled();
        out.step(++step, total, instruction.original);
        await dispatch(ctx, instruction);
      }
      if (state.image) {
        built[index] = state.image;
        if (stage.name) byName.set(stage.name, state.image);
        out.progress({ aux: { ID: state.image.id } });
      }
      last = state.image;
    }
    if (!last) throw errors.buildNoImage();
    const unused = args.unused();
    if (unused.length > 0) out.warning(`One or more build-args [${unused.join(" ")}] were not consumed`);
    for (const tag of opts.tags) {
      await this.deps.images.tag(last.id, tag);
      this.deps.hooks.event.call(imageTagEvent(this.deps.images.resolve(tag), tag));
    }
    out.built(last.id, opts.tags.map(familiarName));
    return last.id;
  }

  /** A base image: the local one, else (or with `pull`) pulled. */
  private async baseImage(ref: string, opts: BuildOptions, emit: Emit, signal: AbortSignal): Promise<Image> {
    const reference = formatReference(parseReference(ref));
    if (!opts.pull) {
      try {
        return this.deps.images.resolve(ref);
      } catch {
        // not here: pulled below
      }
    }
    await this.deps.pull(reference, opts, emit, signal);
    return this.deps.images.resolve(reference);
  }
}

/** A stage's start: its base image's configuration (a PATH when it has none, as Docker adds). */
function stateFrom(base: Image | undefined): BuildState {
  const platform = hostPlatform();
  const config: ContainerConfig = structuredClone(base?.config.config ?? {});
  delete config.Image;
  if (!(config.Env ?? []).some((e) => e.startsWith("PATH="))) config.Env = [...(config.Env ?? []), DEFAULT_PATH];
  return {
    image: base,
    config,
    architecture: base?.config.architecture ?? platform.architecture,
    os: base?.config.os ?? platform.os,
    ...(base?.config.variant ? { variant: base.config.variant } : {}),
  };
}

/**
 * One of the build's `labels` as a step of the last stage: Docker 20.10 adds one `LABEL k=v`
 * step per label (sorted by key), printed and recorded as `LABEL k=v`, and not substituted.
 */
function labelInstruction([key, value]: [string, string]): Instruction {
  return { keyword: "label", original: `LABEL ${key}=${value}`, line: 0, endLine: 0, flags: {}, args: [key, value], json: false, pairs: [[key, value]], verbatim: true };
}
