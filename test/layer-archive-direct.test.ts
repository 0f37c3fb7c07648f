/**
 * core/archive's fast way from a decompressor to the extractor: the tar reader keeps nothing of
 * a chunk once it has returned (a source may read into the same buffer again), unpigz's output
 * goes to it directly (read into one buffer over and over), and a tap sees every byte either
 * way. Real files, real unpigz, real gzip.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { applyLayer, createDecompressor, directOutlet, pump } from "../core/archive/index.js";
import { findUnpigz } from "../core/archive/decompress.js";
import { LayerWriter } from "../core/archive/layer-writer.js";
import { TarReader } from "../core/archive/tar-reader.js";
import { makeTar, type TarEntry } from "./fixtures/layers.js";
import { makeTempDir } from "./helpers/engined.js";

function freshDir(): string {
  const dir = join(makeTempDir("engine-direct-"), "layer");
  mkdirSync(dir);
  return dir;
}

/** Files of random data (with runs of zeros in one), in a folder, and some small ones. */
function entries(): TarEntry[] {
  const out: TarEntry[] = [{ name: "d/", type: "directory" }];
  for (let i = 0; i < 6; i++) out.push({ name: `d/big${i}`, data: randomBytes(700_000 + i * 333) });
  out.push({ name: "d/holes", data: Buffer.concat([randomBytes(5000), Buffer.alloc(300_000), randomBytes(7)]) });
  for (let i = 0; i < 20; i++) out.push({ name: `d/small${i}`, data: randomBytes(i * 97) });
  return out;
}

function expectFiles(dir: string, list: TarEntry[]): void {
  const files = list.filter((e) => e.data !== undefined);
  expect(readdirSync(join(dir, "d")).sort()).to.deep.equal(files.map((e) => e.name.slice(2)).sort());
  for (const e of files) expect(readFileSync(join(dir, e.name)).equals(e.data as Buffer), e.name).to.equal(true);
}

describe("layer archive: the direct way from a decompressor to the extractor", function () {
  this.timeout(120_000);

  it("keeps nothing of a chunk: fed from one buffer overwritten after each write, the files are whole", async () => {
    const list = entries();
    const tar = await makeTar(list);
    const dir = freshDir();
    const writer = new LayerWriter(dir, { whiteouts: "overlay" });
    const reader = new TarReader((header) => {
      // the regular files only (the folder is made here): what is tested is the data path
      if (header.type === "directory") {
        mkdirSync(join(dir, header.name), { recursive: true });
        return undefined;
      }
      return writer.file(header.name, header.name.split("/"), { uid: 0, gid: 0, mode: 0o644, mtime: 0, atime: 0, xattrs: [] }, header.size);
    });
    // one buffer, read into again and again with odd sizes, scribbled over once a write is done
    const buffer = Buffer.alloc(70_001);
    const sizes = [1, 511, 4095, 70_001, 9_000, 65_536];
    for (let at = 0, i = 0; at < tar.length; i++) {
      const n = Math.min(sizes[i % sizes.length], tar.length - at);
      tar.copy(buffer, 0, at, at + n);
      const wait = reader.write(buffer.subarray(0, n));
      if (wait) await wait;
      buffer.fill(0xee);
      at += n;
    }
    await reader.end();
    expectFiles(dir, list);
    expect(statSync(join(dir, "d/holes")).blocks * 512).to.be.below(300_000);
  });

  it("extracts unpigz's output read into one buffer, and a tap digests every byte of it", async function () {
    if (!findUnpigz()) this.skip();
    const list = entries();
    const tar = await makeTar(list);
    const gz = gzipSync(tar, { level: 1 });
    const decoder = createDecompressor({ disablePigz: false });
    const hash = createHash("sha256");
    directOutlet(decoder.output)!.tap((chunk) => hash.update(chunk));
    // fed in small pieces, as a download arrives
    void pump(Readable.from(Array.from({ length: Math.ceil(gz.length / 50_000) }, (_, i) => gz.subarray(i * 50_000, (i + 1) * 50_000))), decoder);
    const dir = freshDir();
    await applyLayer(decoder.output, dir, { whiteouts: "overlay" });
    expectFiles(dir, list);
    expect(hash.digest("hex")).to.equal(createHash("sha256").update(tar).digest("hex"));
  });

  it("gives the same bytes to a Readable reader (copies of the borrowed chunks), digested by the tap", async function () {
    if (!findUnpigz()) this.skip();
    const data = randomBytes(3 * 1024 * 1024);
    const decoder = createDecompressor({ disablePigz: false });
    const hash = createHash("sha256");
    directOutlet(decoder.output)!.tap((chunk) => hash.update(chunk));
    void pump(Readable.from([gzipSync(data, { level: 1 })]), decoder);
    const chunks: Buffer[] = [];
    for await (const c of decoder.output) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(data)).to.equal(true);
    expect(hash.digest("hex")).to.equal(createHash("sha256").update(data).digest("hex"));
  });

  it("fails the extraction with the input's error, and with unpigz's on corrupt data", async function () {
    if (!findUnpigz()) this.skip();
    const gz = gzipSync(await makeTar(entries()), { level: 1 });
    const cut = createDecompressor({ disablePigz: false });
    setTimeout(() => cut.fail(new Error("registry went away")), 50);
    void cut.write(gz.subarray(0, 300_000));
    const err = await applyLayer(cut.output, freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
    expect((err as Error).message).to.equal("registry went away");
    const bad = Buffer.from(gz);
    bad.fill(0x55, 2000, 2400);
    const corrupt = createDecompressor({ disablePigz: false });
    void pump(Readable.from([bad]), corrupt);
    const failed = await applyLayer(corrupt.output, freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
    expect(failed).to.be.instanceOf(Error);
  });
});
