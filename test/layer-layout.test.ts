/**
 * core/archive/tar-layout.ts: a layer tar recorded while it is extracted and made again from
 * the layer's files is the same tar, byte for byte (so the same diff ID): layers of every kind
 * of entry, PAX and GNU long names, xattrs, a PAX sparse file, whiteouts, chunks split anywhere.
 * A layout a later entry made incomplete says so; a file changed afterwards fails the stream.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { applyLayer, LayoutRecorder, tarFromLayout } from "../core/archive/index.js";
import { longPath, makeTar, normalLayerEntries, whiteoutLayerEntries, type TarEntry } from "./fixtures/layers.js";
import { makeTempDir } from "./helpers/engined.js";

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Extracts `tar` (in chunks of odd sizes) with a recorder; the layer folder, the layout file and whether it is complete. */
async function record(tar: Buffer, whiteouts: "overlay" | "remove" = "overlay"): Promise<{ dir: string; file: string; complete: boolean }> {
  const tmp = makeTempDir("engine-layout-");
  const dir = join(tmp, "layer");
  mkdirSync(dir);
  const file = join(tmp, "layout");
  const layout = new LayoutRecorder(file);
  const sizes = [1, 511, 4095, 70_001, 512, 9_000];
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < tar.length; i++) {
    chunks.push(Buffer.from(tar.subarray(at, at + sizes[i % sizes.length])));
    at += sizes[i % sizes.length];
  }
  await applyLayer(Readable.from(chunks), dir, { whiteouts, allowDevices: true, layout });
  const { complete } = await layout.finish();
  return { dir, file, complete };
}

describe("layer archive: tar layouts", function () {
  this.timeout(120_000);

  const cases: Record<string, () => Promise<Buffer>> = {
    "a normal layer: files, directories, links, setuid, xattrs, holes": async () => makeTar(normalLayerEntries()),
    "whiteouts and an opaque directory": async () => makeTar(whiteoutLayerEntries()),
    "a long path (PAX), big random files, an empty file": async () =>
      makeTar([
        { name: `${longPath()}/file`, data: randomBytes(3000) },
        { name: "big", data: randomBytes(1_500_000) },
        { name: "empty", data: Buffer.alloc(0) },
        { name: "zeros", data: Buffer.alloc(200_000) },
      ] as TarEntry[]),
    "GNU tar's POSIX format: --xattrs, a PAX sparse file, a long name": async () => {
      const src = makeTempDir("engine-layout-src-");
      writeFileSync(join(src, "ping"), "#!/bin/sh\n", { mode: 0o755 });
      execFileSync("setcap", ["cap_net_raw+ep", join(src, "ping")]);
      execFileSync("truncate", ["-s", "4M", join(src, "disk.img")]);
      appendFileSync(join(src, "disk.img"), "the end");
      writeFileSync(join(src, `${"n".repeat(150)}.txt`), randomBytes(777));
      return execFileSync("tar", ["--format=posix", "--xattrs", "--xattrs-include=*", "-S", "-cf", "-", "-C", src, "."], { maxBuffer: 64 << 20 });
    },
    "a GNU long name and link name": async () => {
      const src = makeTempDir("engine-layout-gnu-");
      const long = "l".repeat(160);
      writeFileSync(join(src, long), randomBytes(1234));
      execFileSync("ln", ["-s", long, join(src, `link-${"k".repeat(120)}`)]);
      return execFileSync("tar", ["--format=gnu", "-cf", "-", "-C", src, "."], { maxBuffer: 64 << 20 });
    },
  };

  for (const [name, make] of Object.entries(cases)) {
    it(`makes the same tar again: ${name}`, async () => {
      const tar = await make();
      const { dir, file, complete } = await record(tar);
      expect(complete).to.equal(true);
      const again = await collect(tarFromLayout(file, dir, sha(tar)));
      expect(again.length).to.equal(tar.length);
      expect(again.equals(tar)).to.equal(true);
    });
  }

  it("says a layout is incomplete when a later entry replaces a file it recorded (the same name twice)", async () => {
    const tar = await makeTar([{ name: "d/", type: "directory" }, { name: "d/f", data: "first\n" }, { name: "d/f", data: "second\n" }]);
    expect((await record(tar)).complete).to.equal(false);
    const underDir = await makeTar([{ name: "d/", type: "directory" }, { name: "d/f", data: "first\n" }, { name: "d", data: "a file now\n" }]);
    expect((await record(underDir)).complete).to.equal(false);
    const fine = await makeTar([{ name: "d/", type: "directory" }, { name: "d/f", data: "only\n" }, { name: "d/g", type: "symlink", linkname: "f" }]);
    expect((await record(fine)).complete).to.equal(true);
  });

  it("fails the stream when a file changed since, and when one is gone", async () => {
    const tar = await makeTar([{ name: "a", data: randomBytes(5000) }, { name: "b", data: randomBytes(5000) }]);
    const { dir, file } = await record(tar);
    writeFileSync(join(dir, "a"), randomBytes(5000)); // same size, other bytes
    const changed = await collect(tarFromLayout(file, dir, sha(tar))).catch((e: Error) => e);
    expect((changed as Error).message).to.match(/no longer make its tar/);
    execFileSync("rm", [join(dir, "b")]);
    const gone = await collect(tarFromLayout(file, dir, sha(tar))).catch((e: Error) => e);
    expect((gone as Error).message).to.match(/file b is missing/);
  });
});
