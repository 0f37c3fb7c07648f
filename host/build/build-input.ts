/**
 * What a build starts from, read before its stream begins: the context (host/build/context/:
 * the request's tar or its `remote`) in a private folder of its own, and its Dockerfile parsed
 * (core/build). Docker's daemon then takes out of the context the Dockerfile and
 * `.dockerignore` themselves when `.dockerignore` excludes them; the other files it excludes
 * were left out by the client already (the Docker CLI and `engine build` read it), and a
 * context that still has them (a remote one, or an SDK's tar) keeps them, as with Docker.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { parseDockerfile } from "../../core/build/dockerfile-parse.js";
import type { ParsedDockerfile } from "../../core/build/dockerfile-types.js";
import { IgnoreMatcher } from "../../core/build/dockerignore.js";
import type { BuildOptions } from "./build-options.js";
import { openBuildContext } from "./context/index.js";

export interface BuildInput {
  dockerfile: ParsedDockerfile;
  contextRoot: string;
  /** Said before the first step (`[Warning] ...`). */
  warnings: string[];
  cleanup(): Promise<void>;
}

export interface BuildInputsDeps {
  /** Where each build's folder is made (private to root). */
  workRoot: string;
  disablePigz: () => boolean;
}

export class BuildInputs {
  constructor(private readonly deps: BuildInputsDeps) {}

  async open(body: Readable, opts: BuildOptions, signal: AbortSignal): Promise<BuildInput> {
    const workDir = await mkdtemp(join(this.deps.workRoot, "ctx-"));
    const cleanupDir = () => rm(workDir, { recursive: true, force: true });
    try {
      const ctx = await openBuildContext({ body, remote: opts.remote, dockerfile: opts.dockerfile, workDir, signal, disablePigz: this.deps.disablePigz() });
      const cleanup = async () => {
        await ctx.cleanup();
        await cleanupDir();
      };
      try {
        const dockerfile = parseDockerfile(ctx.dockerfileText, { name: ctx.dockerfilePath });
        if (ctx.dockerignore !== undefined) {
          const ignore = IgnoreMatcher.fromFile(ctx.dockerignore);
          for (const name of [ctx.dockerfilePath, ".dockerignore"]) {
            if (ignore.match(name).excluded) await rm(join(ctx.root, name), { force: true });
          }
        }
        const warnings = [...dockerfile.warnings];
        if (dockerfile.syntax) warnings.push(`the syntax directive (${dockerfile.syntax}) is ignored: this daemon has only the classic builder`);
        return { dockerfile, contextRoot: ctx.root, warnings, cleanup };
      } catch (err) {
        await cleanup();
        throw err;
      }
    } catch (err) {
      await cleanupDir();
      throw err;
    }
  }
}
