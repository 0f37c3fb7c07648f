/**
 * `COPY` and `ADD`: the sources are found and checksummed first (the checksum names the step in
 * its history and is the cache's key with the destination and the flags:
 * `#(nop) COPY --chown=1:1 file:<sha256> in /app `), and only on a cache miss written into a
 * layer of the build's own (scratch-layer.ts) on the stage's image, whose diff is the step's
 * layer. `--from` reads a stage's or an image's files; `ADD` also unpacks local archives and
 * downloads URLs.
 */
import { lstatSync, rmSync } from "node:fs";
import { dirname, posix } from "node:path";
import { errors } from "../../core/errors.js";
import type { ImageStore } from "../../core/images/image-store.js";
import type { IdMap } from "../../core/userns/id-map.js";
import { progressBar, throttled } from "../images/progress.js";
import { archiveStream } from "./add-archive.js";
import { chownOwner } from "./chown-flag.js";
import { download, isUrl } from "./add-url.js";
import { findSources, sourcesChecksum, type CopySource } from "./copy-sources.js";
import { copyInto, extractInto, type CopyOwnership } from "./copy-into.js";
import { shellOf } from "../../core/build/config-instruction.js";
import { stepImage, word, type StepContext } from "./dispatch.js";
import type { Instruction } from "../../core/build/dockerfile-types.js";
import { ScratchLayer, type ScratchLayerDeps } from "./scratch-layer.js";

export interface CopyDeps extends ScratchLayerDeps {
  images: ImageStore;
  tmpDir: string;
  idMap?: IdMap;
}

function chmodOf(spec: string | undefined): number | undefined {
  if (spec === undefined) return undefined;
  if (!/^[0-7]{1,4}$/.test(spec)) throw errors.buildInvalidChmod(spec);
  return parseInt(spec, 8);
}

export async function copyStep(ctx: StepContext, i: Instruction): Promise<void> {
  const name = i.keyword.toUpperCase();
  // `--from=` (empty) is the context, and the value is not substituted, as in Docker
  const from = i.flags.from || undefined;
  if (from !== undefined && name === "ADD") throw errors.buildInvalidInstruction("Unknown flag: from");
  const chown = i.flags.chown ? word(ctx, i.flags.chown) : undefined;
  const mode = chmodOf(i.flags.chmod);
  const list = i.args.map((a) => word(ctx, a));
  if (list.length < 2) throw errors.buildInvalidInstruction(`${name} requires at least two arguments`);
  const destGiven = list[list.length - 1];
  const sourcesGiven = list.slice(0, -1);
  const destIsDir = destGiven.endsWith("/") || destGiven.endsWith("/.") || destGiven === ".";
  const workdir = ctx.state.config.WorkingDir || "/";
  const dest = posix.normalize(destGiven.startsWith("/") ? destGiven : posix.join(workdir, destGiven));

  const cleanup: (() => Promise<void> | void)[] = [];
  try {
    let rootDir = ctx.contextRoot;
    if (from !== undefined) {
      // an image that cannot be had (not here, not pullable) in Docker's words: the flag named
      const image =
        ctx.stageImage(from.toLowerCase()) ??
        (await ctx.imageFor(from).catch((err: unknown) => {
          throw errors.buildInvalidFrom(from, (err as Error).message);
        }));
      const layer = await ScratchLayer.open(ctx.deps, image);
      cleanup.push(() => layer.close());
      rootDir = layer.root;
    }
    const sources: CopySource[] = [];
    const downloaded = new Set<string>();
    for (const src of sourcesGiven) {
      if (isUrl(src)) {
        if (name === "COPY") throw errors.buildCopyFailed(name, "source can't be a URL for COPY");
        // Docker's progress bar of the download (no id), then a line of its own
        let total = -1;
        const report = throttled((current) => ctx.out.progress({ status: "Downloading", progressDetail: { current, total }, progress: progressBar(current, total) }));
        const file = await download(src, ctx.deps.tmpDir, ctx.signal, (current, size, last) => {
          total = size;
          report(current, last);
        });
        ctx.out.stream("\n");
        cleanup.push(() => rmSync(dirname(file), { recursive: true, force: true }));
        downloaded.add(file);
        sources.push({ hostPath: file, path: `/${posix.basename(file)}`, stats: lstatSync(file), remote: true });
      } else {
        sources.push(...findSources(name, rootDir, [src]));
      }
    }
    if (sources.length > 1 && !destIsDir) throw errors.buildCopyDestNotDir(name);
    const checksum = await sourcesChecksum(sources);
    // `--chown=1:2file:<sum>`: Docker writes no space after the owner (its history, and so its
    // cache key, have it so); --chmod is BuildKit's, which the classic builder of 20.10 refuses
    const flags = `${chown ? `--chown=${chown}` : ""}${i.flags.chmod ? `${chown ? " " : ""}--chmod=${i.flags.chmod} ` : ""}`;
    const c = ctx.state.config;
    const probe = { ...c, Cmd: [...shellOf(c), `#(nop) ${name} ${flags}${checksum} in ${destGiven} `] };
    const unpack = name === "ADD" && from === undefined;
    await stepImage(ctx, probe, c, async () => {
      const layer = await ScratchLayer.open(ctx.deps, ctx.state.image);
      try {
        const own: CopyOwnership = { owner: chown ? chownOwner(layer.root, chown) : undefined, preserve: from !== undefined, mode };
        for (const s of sources) {
          // a local archive is unpacked; one downloaded is not, as in Docker
          const tar = unpack && !downloaded.has(s.hostPath) && s.stats.isFile() ? await archiveStream(s.hostPath) : undefined;
          if (tar) await extractInto(layer.root, tar, dest, ctx.deps.idMap);
          else await copyInto(layer.root, [s], dest, destIsDir || sources.length > 1, own, ctx.deps.idMap);
        }
        return { layerTar: await layer.diffTo(ctx.deps.tmpDir) };
      } finally {
        await layer.close();
      }
    });
  } finally {
    for (const undo of cleanup.reverse()) await undo();
  }
}
