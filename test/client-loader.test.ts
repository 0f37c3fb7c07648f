/**
 * The client's loader (core/chunk-loader.cts, run as dist/client/main.cjs): after a command it
 * writes each chunk's V8 code cache with the keys of the runs it covers; a later run of the same
 * command uses the caches as they are, another command adds its key; a cache V8 refuses, a
 * damaged one or one cut short is written again, one made for another source is not taken;
 * NODE_DISABLE_COMPILE_CACHE=1 writes none; a cache folder that cannot be made costs the command
 * nothing. Each test runs a copy of the built client in a folder of its own (dist/client,
 * dist/build-info.json, package.json).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { makeTempDir, ROOT, runCommand } from "./helpers/engined.js";

const NODE = join(ROOT, "node_modules/node/bin/node");

/** A copy of the built client as the tree lays it out; its cache folder is <copy>/dist/.code-cache/client. */
function clientCopy(): { main: string; cache: string; config: string } {
  const dir = makeTempDir("engine-client-loader-");
  cpSync(join(ROOT, "dist/client"), join(dir, "dist/client"), { recursive: true });
  cpSync(join(ROOT, "dist/build-info.json"), join(dir, "dist/build-info.json"));
  cpSync(join(ROOT, "package.json"), join(dir, "package.json"));
  mkdirSync(join(dir, "config"));
  return { main: join(dir, "dist/client/main.cjs"), cache: join(dir, "dist/.code-cache/client"), config: join(dir, "config") };
}

/** The run keys in each cache file, by chunk. */
function cacheKeys(cache: string): Map<string, number[]> {
  return new Map(
    readdirSync(cache).map((f) => {
      const file = readFileSync(join(cache, f));
      return [f, (JSON.parse(file.toString("utf8", 4, 4 + file.readUInt32LE(0))) as { keys: number[] }).keys];
    }),
  );
}

async function client(main: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await runCommand(NODE, ["--", main, ...args], { env: { NODE_DISABLE_COMPILE_CACHE: undefined, ...env } });
  expect(r.stderr).to.equal("");
  expect(r.code).to.equal(0);
  return r.stdout;
}

describe("client loader: code caches made after a command ran", function () {
  this.timeout(60_000);

  it("writes a cache per loaded chunk, keeps it for the same command and adds another command's key", async () => {
    const c = clientCopy();
    expect(await client(c.main, ["--version"])).to.match(/^engine version /);
    const first = cacheKeys(c.cache);
    expect(first.size).to.be.greaterThan(1);
    for (const keys of first.values()) expect(keys).to.have.length(1);
    const bytes = new Map(readdirSync(c.cache).map((f) => [f, readFileSync(join(c.cache, f))]));

    // the same command again: every cache taken as it is (none refused, none written)
    expect(await client(c.main, ["--version"])).to.match(/^engine version /);
    for (const [f, b] of bytes) expect(readFileSync(join(c.cache, f)).equals(b), f).to.equal(true);

    // another command (no daemon needed): the chunks both load now cover both runs
    expect(await client(c.main, ["context", "ls"], { ENGINE_CONFIG: c.config })).to.match(/^NAME\s+DESCRIPTION/);
    const both = cacheKeys(c.cache);
    const shared = [...first.keys()].filter((f) => both.get(f)!.length === 2);
    expect(shared, "chunks loaded by both commands").to.not.be.empty;
    for (const f of shared) expect(both.get(f)).to.include.members(first.get(f)!);
  });

  it("writes again a cache V8 refuses, a damaged one and one cut short, and runs meanwhile", async () => {
    const c = clientCopy();
    await client(c.main, ["--version"]);
    const [refused, damaged, cut, other] = [...cacheKeys(c.cache).keys()].sort((a, b) => readFileSync(join(c.cache, a)).length - readFileSync(join(c.cache, b)).length);
    expect(other, "four chunks loaded by --version").to.be.a("string");
    const path = (f: string) => join(c.cache, f);
    // another chunk's cache, whole and of the same run: V8 refuses it (its source differs)
    cpSync(path(other), path(refused));
    // a flipped bit in V8's data (its first copy), which V8 does not notice: without the second
    // copy to compare, the loader took it (and, for some bits, the client crashed at every run
    // with V8's "Fatal error ... unreachable code")
    const bytes = readFileSync(path(damaged));
    const start = 4 + bytes.readUInt32LE(0);
    bytes[start + Math.floor((bytes.length - start) / 20)] ^= 0x10;
    writeFileSync(path(damaged), bytes);
    writeFileSync(path(cut), bytes.subarray(0, 2));

    expect(await client(c.main, ["--version"])).to.match(/^engine version /);
    expect(readFileSync(path(refused)).equals(readFileSync(path(other))), "refused cache written again").to.equal(false);
    expect(readFileSync(path(damaged)).equals(bytes), "damaged cache written again").to.equal(false);
    expect(readFileSync(path(cut)).length, "cut cache written again").to.be.greaterThan(2);
    // and taken now as they are
    const now = new Map([refused, damaged, cut].map((f) => [f, readFileSync(path(f))]));
    expect(await client(c.main, ["--version"])).to.match(/^engine version /);
    for (const [f, b] of now) expect(readFileSync(path(f)).equals(b), f).to.equal(true);
  });

  it("takes no cache made for another source of the same length (V8 would run the old code)", async () => {
    const c = clientCopy();
    expect(await client(c.main, ["--version"])).to.match(/^engine version /);
    const printed = "`engine version ${"; // the template --version prints
    const chunk = readdirSync(dirname(c.main)).find((f) => readFileSync(join(dirname(c.main), f), "utf8").includes(printed))!;
    const code = readFileSync(join(dirname(c.main), chunk), "utf8");
    writeFileSync(join(dirname(c.main), chunk), code.replace(printed, printed.toUpperCase()));
    expect(await client(c.main, ["--version"])).to.match(/^ENGINE VERSION /);
  });

  it("writes nothing with NODE_DISABLE_COMPILE_CACHE=1", async () => {
    const c = clientCopy();
    expect(await client(c.main, ["--version"], { NODE_DISABLE_COMPILE_CACHE: "1" })).to.match(/^engine version /);
    expect(existsSync(c.cache)).to.equal(false);
  });

  it("runs without caches where their folder cannot be made", async () => {
    const c = clientCopy();
    mkdirSync(dirname(c.cache));
    writeFileSync(c.cache, "a file where the folder would be");
    expect(await client(c.main, ["--version"])).to.match(/^engine version /);
    expect(await client(c.main, ["context", "ls"], { ENGINE_CONFIG: c.config })).to.match(/^NAME/);
    expect(readFileSync(c.cache, "utf8")).to.equal("a file where the folder would be");
  });
});
