/**
 * core/archive's decompression against real streams: gzip through unpigz (started ahead, kept as
 * spares, its socket pairs in the daemon's folder) and through zlib, zstd, anything else passed
 * through, and corrupt or failing input. The unpigz processes a test starts are checked to be gone.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { createDecompressor, decompress, pump } from "../core/archive/index.js";
import { findUnpigz } from "../core/archive/decompress.js";
import { usePairFolder } from "../core/archive/socket-pair.js";
import { unpigzSpares } from "../core/archive/unpigz.js";
import { makeTempDir } from "./helpers/engined.js";
import { collect } from "./helpers/layer-archive.js";
import { eventually } from "./helpers/net-daemon.js";

/** The unpigz processes this test process started. */
function ourUnpigz(): string[] {
  return readdirSync("/proc").filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.includes("(unpigz)") && Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid;
    } catch {
      return false; // (gone meanwhile)
    }
  });
}

describe("layer archive", function () {
  this.timeout(120_000);

  describe("decompress", () => {
    const plain = Buffer.concat([Buffer.from("not compressed at all "), Buffer.alloc(256 * 1024, 7)]);

    it("gunzips through unpigz when it is installed", async function () {
      if (!findUnpigz()) this.skip();
      const out = await collect(decompress(Readable.from([gzipSync(plain)]), { disablePigz: false }));
      expect(out.equals(plain)).to.equal(true);
    });

    it("gunzips through zlib with disablePigz, the input split in small chunks", async () => {
      const gz = gzipSync(plain);
      const chunks = Array.from({ length: Math.ceil(gz.length / 3) }, (_, i) => gz.subarray(i * 3, i * 3 + 3));
      const out = await collect(decompress(Readable.from(chunks), { disablePigz: true }));
      expect(out.equals(plain)).to.equal(true);
    });

    it("decompresses zstd", async () => {
      const out = await collect(decompress(Readable.from([zstdCompressSync(plain)]), { disablePigz: false }));
      expect(out.equals(plain)).to.equal(true);
    });

    it("passes anything else through unchanged, short inputs included", async () => {
      for (const input of [plain, Buffer.alloc(0), Buffer.from([0x1f]), Buffer.from("abc"), Buffer.from([0x28, 0xb5, 0x2f])]) {
        const out = await collect(decompress(Readable.from(input.length ? [input] : []), { disablePigz: false }));
        expect(out.equals(input)).to.equal(true);
      }
    });

    it("fails on corrupt data, with unpigz and with zlib", async () => {
      const bad = gzipSync(plain);
      bad.fill(0x55, 20, 200);
      for (const disablePigz of [false, true]) {
        const err = await collect(decompress(Readable.from([bad]), { disablePigz })).catch((e: Error) => e);
        expect(err, `disablePigz=${disablePigz}`).to.be.instanceOf(Error);
      }
      const zst = zstdCompressSync(randomBytes(64 * 1024));
      const err = await collect(decompress(Readable.from([zst.subarray(0, zst.length / 2)]), { disablePigz: false })).catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
    });

    it("starts unpigz ahead for a stream expected to be gzip: used for gzip, dropped for another format or when the output goes first", async function () {
      if (!findUnpigz()) this.skip();
      for (const input of [gzipSync(plain), zstdCompressSync(plain), plain]) {
        const decoder = createDecompressor({ disablePigz: false });
        decoder.expect!("gzip");
        const out = collect(decoder.output);
        await pump(Readable.from([input]), decoder);
        expect((await out).equals(plain)).to.equal(true);
      }
      const unused = createDecompressor({ disablePigz: false });
      unused.expect!("gzip");
      await eventually("unpigz started ahead", () => ourUnpigz().length === 1, 5000);
      unused.output.destroy();
      await eventually("no unpigz left", () => ourUnpigz().length === 0, 5000);
    });

    it("keeps spare unpigz processes: started when asked, taken by a decompression, refilled once it has ended, all killed by keep(0)", async function () {
      if (!findUnpigz()) this.skip();
      try {
        unpigzSpares.keep(2);
        await eventually("two spares", () => ourUnpigz().length === 2, 5000);
        const before = ourUnpigz();
        const decoder = createDecompressor({ disablePigz: false });
        decoder.expect!("gzip");
        const out = collect(decoder.output);
        await pump(Readable.from([gzipSync(plain)]), decoder);
        expect((await out).equals(plain)).to.equal(true);
        // the decompression ran in one of the spares (no third process), which ended with it
        await eventually("a spare used and refilled", () => {
          const now = ourUnpigz();
          return now.length === 2 && now.filter((pid) => before.includes(pid)).length === 1;
        }, 5000);
        // one killed from outside while it waits (and seen to end) is not handed out
        process.kill(Number(ourUnpigz()[0]), "SIGKILL");
        await eventually("the killed spare reaped", () => ourUnpigz().length === 1, 5000);
        const again = createDecompressor({ disablePigz: false });
        again.expect!("gzip");
        const out2 = collect(again.output);
        await pump(Readable.from([gzipSync(plain)]), again);
        expect((await out2).equals(plain)).to.equal(true);
      } finally {
        unpigzSpares.keep(0);
      }
      await eventually("no spare left", () => ourUnpigz().length === 0, 5000);
    });

    it("makes its socket pairs in the daemon's folder: what a killed process left there is removed, nothing stays after a pair", async function () {
      if (!findUnpigz()) this.skip();
      const dir = join(makeTempDir("engine-pairs-"), "pairs");
      mkdirSync(dir);
      const stale = createServer().listen(join(dir, "left-by-a-kill"));
      await once(stale, "listening");
      stale.close();
      writeFileSync(join(dir, "left-file"), "");
      try {
        usePairFolder(dir);
        expect(readdirSync(dir)).to.deep.equal([]);
        expect(statSync(dir).mode & 0o777).to.equal(0o700);
        const out = await collect(decompress(Readable.from([gzipSync(plain)]), { disablePigz: false }));
        expect(out.equals(plain)).to.equal(true);
        expect(readdirSync(dir)).to.deep.equal([]);
        // a folder whose socket paths would not fit in an address: the temporary folder again
        usePairFolder(join(dir, "x".repeat(100)));
        expect(existsSync(join(dir, "x".repeat(100)))).to.equal(false);
        const again = await collect(decompress(Readable.from([gzipSync(plain)]), { disablePigz: false }));
        expect(again.equals(plain)).to.equal(true);
      } finally {
        usePairFolder(undefined);
      }
    });

    it("passes on an error of the input", async () => {
      for (const head of [gzipSync(plain).subarray(0, 100), Buffer.from("plain text")]) {
        const input = new PassThrough();
        input.write(head);
        setTimeout(() => input.destroy(new Error("connection reset")), 20);
        const err = await collect(decompress(input, { disablePigz: false })).catch((e: Error) => e);
        expect((err as Error).message).to.equal("connection reset");
      }
    });
  });
});
