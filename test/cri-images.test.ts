/**
 * The CRI served by `engined --cri-supervisor` on `<exec-root>/cri.sock`, driven over gRPC with
 * @grpc/grpc-js: Version, Status (runtime and network conditions) and the ImageService over the
 * daemon's own image store, against registries on loopback (with and without a login). Mirrors
 * cri-tools' validate specs for images: pull and remove by tag, status by tag, digest and ID,
 * list, removal twice, a missing image's status as no image (not an error).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { busyboxRootfs, dockerSaveTar, imageOf, writeFixture } from "./fixtures/images.js";
import { pushImage } from "./fixtures/registry-push.js";
import { criClient, grpc, type CriClient } from "./helpers/cri-client.js";
import { docker, dockerInfo } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { startRegistry, stopAllRegistries, type TestRegistry } from "./helpers/registry.js";

const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

describe("CRI: version, status and images (engined --cri-supervisor)", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let cri: CriClient;
  let cniConf: string;
  let rootfs: Buffer;
  let open: TestRegistry;

  before(async function () {
    cniConf = makeTempDir("engine-cri-cni-");
    d = await startEngined({ args: ["--cri-supervisor", "--cri-cni-conf-dir", cniConf, "--group", ""], env: NO_PROXY_ENV });
    cri = criClient(join(d.dir, "exec", "cri.sock"));
    rootfs = await busyboxRootfs();
    open = await startRegistry({ auth: "none" });
  });

  after(async function () {
    cri?.close();
    await d?.stop();
    await stopAllRegistries();
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(`--- engined output (last 4000 chars):\n${d.output().slice(-4000)}`);
  });

  it("serves on <exec-root>/cri.sock with mode 0660 and answers Version and RuntimeConfig", async function () {
    expect(statSync(join(d.dir, "exec", "cri.sock")).mode & 0o777).to.equal(0o660);
    const v = await cri.call("runtime", "Version", { version: "v1" });
    expect(v).to.include({ version: "0.1.0", runtimeName: "engine", runtimeApiVersion: "v1" });
    expect(v.runtimeVersion).to.match(/^\d+\.\d+\.\d+/);
    // the cgroup driver the kubelet must pair with: the one `docker info` shows
    const info = JSON.parse((await dockerInfo(`unix://${d.socket}`, ["--format", "{{json .CgroupDriver}}"])).stdout);
    expect((await cri.call("runtime", "RuntimeConfig", {})).linux.cgroupDriver).to.equal(info === "systemd" ? "SYSTEMD" : "CGROUPFS");
  });

  it("Status: RuntimeReady; NetworkReady only once a CNI config with its plugins is there", async function () {
    const before = await cri.call("runtime", "Status", {});
    const cond = (s: any, type: string) => s.status.conditions.find((c: any) => c.type === type);
    expect(cond(before, "RuntimeReady").status).to.equal(true);
    expect(cond(before, "NetworkReady")).to.include({ status: false, reason: "NetworkPluginNotReady" });
    expect(before.runtimeHandlers.map((h: any) => h.name)).to.include("");
    // a plugin that is not installed keeps it not ready, naming the plugin
    writeFileSync(join(cniConf, "10-bad.conflist"), JSON.stringify({ cniVersion: "1.0.0", name: "bad", plugins: [{ type: "no-such-plugin" }] }));
    expect(cond(await cri.call("runtime", "Status", {}), "NetworkReady").message).to.include("no-such-plugin");
    writeFileSync(join(cniConf, "05-pods.conflist"), JSON.stringify({ cniVersion: "1.0.0", name: "pods", plugins: [{ type: "loopback" }] }));
    const after = await cri.call("runtime", "Status", { verbose: true });
    expect(cond(after, "NetworkReady").status).to.equal(true);
    expect(JSON.parse(after.info.config).cni.network.name).to.equal("pods");
  });

  it("pulls by tag, shows the image by tag, digest and ID, lists it, and removes it (twice is fine)", async function () {
    const pushed = await pushImage(open, "cri/busybox", "1.0", [rootfs], { config: { config: { User: "1234" } } });
    const ref = `${open.host}/cri/busybox:1.0`;
    const pulled = await cri.call("image", "PullImage", { image: { image: ref } });
    expect(pulled.imageRef).to.equal(pushed.configDigest);
    for (const name of [ref, `${open.host}/cri/busybox@${pushed.manifestDigest}`, pushed.configDigest, pushed.configDigest.slice(7)]) {
      const st = await cri.call("image", "ImageStatus", { image: { image: name } });
      expect(st.image, name).to.not.equal(null);
      expect(st.image.id).to.equal(pushed.configDigest);
    }
    const st = await cri.call("image", "ImageStatus", { image: { image: ref }, verbose: true });
    expect(st.image.repoTags).to.deep.equal([ref]);
    expect(st.image.repoDigests).to.deep.equal([`${open.host}/cri/busybox@${pushed.manifestDigest}`]);
    expect(Number(st.image.size)).to.be.greaterThan(0);
    expect(st.image.uid).to.deep.equal({ value: "1234" });
    expect(JSON.parse(st.info.info).id).to.equal(pushed.configDigest);
    const listed = await cri.call("image", "ListImages", {});
    expect(listed.images.map((i: any) => i.id)).to.include(pushed.configDigest);
    const filtered = await cri.call("image", "ListImages", { filter: { image: { image: ref } } });
    expect(filtered.images.map((i: any) => i.id)).to.deep.equal([pushed.configDigest]);

    await cri.call("image", "RemoveImage", { image: { image: ref } });
    expect((await cri.call("image", "ImageStatus", { image: { image: ref } })).image).to.equal(null);
    await cri.call("image", "RemoveImage", { image: { image: ref } });
  });

  it("shares the daemon's image store both ways: docker load is seen by the CRI, a CRI pull by docker", async function () {
    const host = `unix://${d.socket}`;
    const image = imageOf([rootfs], { config: { Cmd: ["sh"], Env: ["PATH=/bin"], User: "nobody" } });
    const tar = writeFixture(makeTempDir(), "image.tar", await dockerSaveTar([{ image, tags: ["cri-shared:v1"] }]));
    const loaded = await docker(host, ["load", "-i", tar]);
    expect(loaded.code, loaded.stderr).to.equal(0);
    const st = await cri.call("image", "ImageStatus", { image: { image: "cri-shared:v1" } });
    expect(st.image.id).to.equal(image.id);
    expect(st.image.repoTags).to.deep.equal(["docker.io/library/cri-shared:v1"]);
    expect(st.image).to.include({ username: "nobody", uid: null });

    await pushImage(open, "cri/other", "2", [rootfs]);
    await cri.call("image", "PullImage", { image: { image: `${open.host}/cri/other:2` } });
    const ls = await docker(host, ["images", "--format", "{{.Repository}}:{{.Tag}}"]);
    expect(ls.stdout).to.include(`${open.host}/cri/other:2`);
    // and a docker rmi is seen by the CRI
    expect((await docker(host, ["rmi", "cri-shared:v1"])).code).to.equal(0);
    expect((await cri.call("image", "ImageStatus", { image: { image: "cri-shared:v1" } })).image).to.equal(null);
  });

  it("pulls with AuthConfig from a registry that wants a login: refused without, taken with a password or with auth", async function () {
    const reg = await startRegistry({ auth: "token", requireLogin: true });
    const [user] = reg.users;
    await pushImage(reg, "team/app", "v1", [rootfs]);
    const ref = `${reg.host}/team/app:v1`;
    const refused = await cri.fails("image", "PullImage", { image: { image: ref } });
    expect([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.NOT_FOUND]).to.include(refused.code);
    expect((await cri.call("image", "ImageStatus", { image: { image: ref } })).image).to.equal(null);
    await cri.call("image", "PullImage", { image: { image: ref }, auth: { username: user.username, password: user.password } });
    await cri.call("image", "RemoveImage", { image: { image: ref } });
    const auth = Buffer.from(`${user.username}:${user.password}`).toString("base64");
    const again = await cri.call("image", "PullImage", { image: { image: ref }, auth: { auth, serverAddress: reg.host } });
    expect(again.imageRef).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(reg.token!.requests.some((r) => r.user === user.username)).to.equal(true);
    await cri.call("image", "RemoveImage", { image: { image: ref } });
  });

  it("ImageFsInfo reports the storage driver's folder with the bytes the layers use", async function () {
    await pushImage(open, "cri/fs", "1", [rootfs], { config: { config: { Cmd: ["true"] } } });
    await cri.call("image", "PullImage", { image: { image: `${open.host}/cri/fs:1` } });
    const info = await cri.call("image", "ImageFsInfo", {});
    expect(info.imageFilesystems).to.have.length(1);
    const fs = info.imageFilesystems[0];
    expect(fs.fsId.mountpoint.startsWith(join(d.dir, "data"))).to.equal(true);
    expect(Number(fs.timestamp)).to.be.greaterThan(0);
    expect(Number(fs.usedBytes.value)).to.be.greaterThan(0);
  });

  it("bad input is InvalidArgument naming the field; a missing image's status is no image", async function () {
    const empty = await cri.fails("image", "PullImage", { image: { image: "" } });
    expect(empty.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(empty.details).to.include("image.image");
    const noSpec = await cri.fails("image", "ImageStatus", {});
    expect(noSpec.code).to.equal(grpc.status.INVALID_ARGUMENT);
    const bad = await cri.fails("image", "PullImage", { image: { image: "UPPER/Case:tag" } });
    expect(bad.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).to.include("image.image");
    const badAuth = await cri.fails("image", "PullImage", { image: { image: "x/y:z" }, auth: { auth: Buffer.from("nocolon").toString("base64") } });
    expect(badAuth.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(badAuth.details).to.include("auth.auth");
    expect((await cri.call("image", "ImageStatus", { image: { image: "never-pulled:here" } })).image).to.equal(null);
    await cri.call("image", "RemoveImage", { image: { image: "never-pulled:here" } });
  });

  it("a daemon without --cri-supervisor serves no CRI socket", async function () {
    const plain = await startEngined({ env: NO_PROXY_ENV });
    try {
      expect(() => statSync(join(plain.dir, "exec", "cri.sock"))).to.throw();
    } finally {
      await plain.stop();
    }
  });
});
