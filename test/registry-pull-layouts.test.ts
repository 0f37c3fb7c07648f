/**
 * A pull keeps no compressed blob, as Docker's daemon: a pulled layer is kept as its files and
 * the layout of its tar (core/archive/tar-layout.ts), and its tar is made again from them, byte
 * for byte, for `docker save` and for a push to a registry that lacks the blob (recompressed,
 * so with a new digest and a new manifest, as Docker pushes). A push to a registry that has the
 * blob uploads nothing ("Layer already exists"). Real registries (docker-registry), the real
 * Docker CLI, real engined daemons.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { busyboxRootfs, makeTar } from "./fixtures/images.js";
import { MEDIA, pushImage, RegistrySession, type PushedImage } from "./fixtures/registry-push.js";

const ACCEPT = [MEDIA.dockerManifest, MEDIA.ociManifest].join(", ");

async function manifestOf(reg: TestRegistry, repo: string, ref: string): Promise<{ digest: string; layers: string[] }> {
  const res = await new RegistrySession(reg, repo, undefined, "pull").fetch("GET", `/v2/${repo}/manifests/${ref}`, { headers: { accept: ACCEPT } });
  expect(res.status, res.body.toString()).to.equal(200);
  const manifest = JSON.parse(res.body.toString()) as { layers: { digest: string }[] };
  return { digest: String(res.headers["docker-content-digest"]), layers: manifest.layers.map((l) => l.digest) };
}

const lines = (text: string) => text.split("\n").map((l) => l.trimEnd()).filter(Boolean);

describe("pulled layers kept as layouts, not as compressed blobs", function () {
  this.timeout(180_000);
  let regA: TestRegistry;
  let regB: TestRegistry;
  let d: TestDaemon;
  let app: PushedImage;
  const daemons: TestDaemon[] = [];
  const cli = async (daemon: TestDaemon, args: string[]) => docker(`unix://${daemon.socket}`, args);
  const ok = async (daemon: TestDaemon, args: string[]) => {
    const r = await cli(daemon, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r;
  };
  const fresh = async () => {
    const daemon = await startEngined();
    daemons.push(daemon);
    return daemon;
  };

  before(async () => {
    [regA, regB] = await Promise.all([startRegistry(), startRegistry()]);
    const data = await makeTar([{ name: "data/", type: "directory" }, { name: "data/hello", data: "hello from the second layer\n" }, { name: "data/random", data: randomBytes(300_000) }]);
    app = await pushImage(regA, "lib/app", "v1", [await busyboxRootfs(), data]);
    d = await fresh();
    await ok(d, ["pull", `${regA.host}/lib/app:v1`]);
  });

  after(async () => {
    for (const daemon of daemons) await daemon.stop();
    await Promise.all([regA?.stop(), regB?.stop()]);
  });

  it("keeps no layer blob: the config blob, and a layout next to each layer's record", () => {
    const blobs = readdirSync(join(d.dir, "data", "image", "blobs", "sha256"));
    expect(blobs).to.deep.equal([app.configDigest.slice(7)]);
    const layouts = readdirSync(join(d.dir, "data", "image", "layers")).filter((f) => f.endsWith(".layout"));
    expect(layouts).to.have.length(2);
  });

  it("saves the pulled image byte for byte: loaded into another daemon it is the same image", async () => {
    const file = join(makeTempDir("engine-layouts-"), "app.tar");
    await ok(d, ["save", "-o", file, `${regA.host}/lib/app:v1`]);
    const other = await fresh();
    const loaded = await ok(other, ["load", "-i", file]);
    expect(loaded.stdout).to.include(`Loaded image: ${regA.host}/lib/app:v1`);
    const [info] = JSON.parse((await ok(other, ["image", "inspect", `${regA.host}/lib/app:v1`])).stdout) as { Id: string; RootFS: { Layers: string[] } }[];
    expect(info.Id).to.equal(app.configDigest);
    expect(info.RootFS.Layers).to.deep.equal(app.diffIds);
  });

  it("pushes to the registry it came from without an upload, to another one recompressed, which pulls back and runs", async () => {
    await ok(d, ["tag", `${regA.host}/lib/app:v1`, `${regA.host}/lib/app:v2`]);
    const same = await ok(d, ["push", `${regA.host}/lib/app:v2`]);
    expect(lines(same.stdout).filter((l) => /^[0-9a-f]{12}: Layer already exists$/.test(l))).to.have.length(2);
    expect((await manifestOf(regA, "lib/app", "v2")).layers).to.deep.equal(app.layerDigests);

    await ok(d, ["tag", `${regA.host}/lib/app:v1`, `${regB.host}/lib/app:v1`]);
    const other = await ok(d, ["push", `${regB.host}/lib/app:v1`]);
    expect(lines(other.stdout).filter((l) => /^[0-9a-f]{12}: Pushed$/.test(l))).to.have.length(2);
    const pushed = await manifestOf(regB, "lib/app", "v1");
    expect(pushed.layers).to.have.length(2);
    for (const digest of pushed.layers) expect(app.layerDigests).to.not.include(digest); // gzip made again
    expect(pushed.digest).to.not.equal(app.manifestDigest);

    const puller = await fresh();
    await ok(puller, ["pull", `${regB.host}/lib/app:v1`]);
    const [info] = JSON.parse((await ok(puller, ["image", "inspect", `${regB.host}/lib/app:v1`])).stdout) as { Id: string }[];
    expect(info.Id).to.equal(app.configDigest);
    const run = await ok(puller, ["run", "--rm", "--network", "none", `${regB.host}/lib/app:v1`, "/bin/busybox", "cat", "/data/hello"]);
    expect(run.stdout).to.equal("hello from the second layer\n");
  });

  it("a layer whose tar replaces one of its own files pulls, but cannot be exported; where the registry has it, a push needs no export", async () => {
    await pushImage(regA, "lib/dup", "v1", [await makeTar([{ name: "f", data: "first\n" }, { name: "f", data: "second\n" }])]);
    await ok(d, ["pull", `${regA.host}/lib/dup:v1`]);
    const save = await cli(d, ["save", "-o", join(makeTempDir("engine-layouts-"), "dup.tar"), `${regA.host}/lib/dup:v1`]);
    expect(save.code).to.not.equal(0);
    expect(save.stderr).to.match(/layer sha256:[0-9a-f]{64} cannot be exported: a later entry of its tar replaced an earlier one's file/);
    await ok(d, ["tag", `${regA.host}/lib/dup:v1`, `${regA.host}/lib/dup:v2`]);
    const same = await ok(d, ["push", `${regA.host}/lib/dup:v2`]);
    expect(lines(same.stdout)).to.satisfy((ls: string[]) => ls.some((l) => /^[0-9a-f]{12}: Layer already exists$/.test(l)));
  });
});
