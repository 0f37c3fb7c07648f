/**
 * Every kill point of the image operations: for commit (of a running container, paused while
 * its layer is read), pull (from a real registry on loopback), load and import, engined is
 * killed with SIGKILL at each step the operation passes, in turn (core/kill-points.ts), started
 * again on the same roots, and checked (helpers/kill-checks.ts): the image is whole or absent,
 * no layer without its record or the other way round, no blob nothing keeps, no pending mark,
 * half-made layout or temporary file left, and the committed container still runs, not frozen
 * and not listed paused.
 */
import "./helpers/root-hooks.js";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { busyboxRootfs, dockerSaveTar, imageOf, makeTar } from "./fixtures/images.js";
import { pushImage } from "./fixtures/registry-push.js";
import { everyStep, KillBed, reportTrials } from "./helpers/kill-bed.js";
import { settledProblems } from "./helpers/kill-checks.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";

describe("kill points: images", function () {
  this.timeout(900_000);
  let bed: KillBed;
  let registry: TestRegistry | undefined;
  /** The running container that commits are made of. */
  let committed: string;

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    bed = new KillBed();
    await bed.start();
    const imported = await bed.send("POST", `/images/create?fromSrc=-&repo=busybox&tag=latest&changes=${encodeURIComponent('CMD ["sh"]')}`, await busyboxRootfs());
    expect(imported.status, imported.body).to.equal(200);
    const cmd = ["sh", "-c", "echo changed > /changed; trap 'exit 3' TERM; while true; do sleep 0.1; done"];
    committed = (await bed.ok<{ Id: string }>("POST", "/containers/create?name=committed", { Image: "busybox", Cmd: cmd })).Id;
    await bed.ok("POST", `/containers/${committed}/start`);
  });

  after(async () => {
    if (bed?.d) {
      await bed.api("DELETE", `/containers/${committed}?force=1`).catch(() => undefined);
      await bed.stop();
    }
    await registry?.stop();
    if (bed) reportTrials("images", bed);
  });

  /** Removes the image a trial may have made (a 404 when it did not). */
  const removeImage = (ref: string) => async () => {
    const r = await bed.api("DELETE", `/images/${encodeURIComponent(ref)}?force=1`);
    if (r.status !== 200 && r.status !== 404) throw new Error(`rmi ${ref}: ${r.status} ${r.body}`);
  };

  /** The image is whole (inspect answers, as many layers as asked) or absent. */
  const wholeOrAbsent = (ref: string, layers: number) => async (_: unknown, why: string) => {
    const r = await bed.api("GET", `/images/${encodeURIComponent(ref)}/json`);
    if (r.status === 404) return;
    expect(r.status, `${why}: ${r.body}`).to.equal(200);
    expect((JSON.parse(r.body) as { RootFS: { Layers: string[] } }).RootFS.Layers, why).to.have.length(layers);
  };

  const trials = <T>(name: string, prepare: () => Promise<T>, op: (subject: T) => Promise<unknown>, after: (subject: T, why: string) => Promise<void>, cleanup: () => Promise<void>) =>
    everyStep(bed, { name, prepare, op, after, cleanup, problems: () => settledProblems(bed) });

  it("commit of a running container, paused meanwhile", async () => {
    const steps = await trials(
      "commit",
      async () => undefined,
      () => bed.ok("POST", `/commit?container=${committed}&repo=committed&tag=1&pause=1`),
      async (_, why) => {
        await wholeOrAbsent("committed:1", 2)(_, why);
        const state = (await bed.ok<{ State: { Status: string } }>("GET", `/containers/${committed}/json`)).State;
        expect(state.Status, `${why}: the committed container`).to.equal("running");
      },
      removeImage("committed:1"),
    );
    expect(steps).to.include.members(["pause.frozen", "commit.layer-read", "unpause.thawed", "layer.recorded", "image.recorded"]);
  });

  it("import", async () => {
    const tar = await makeTar([{ name: "imported/", type: "directory" }, { name: "imported/data", data: randomBytes(64 * 1024) }]);
    const steps = await trials(
      "import",
      async () => undefined,
      () => bed.send("POST", "/images/create?fromSrc=-&repo=imported&tag=1", tar),
      wholeOrAbsent("imported:1", 1),
      removeImage("imported:1"),
    );
    expect(steps).to.include.members(["layer.pending-marked", "layer.created", "layer.applied", "layer.recorded", "image.recorded", "image.stored"]);
  });

  it("load of an image of two layers", async () => {
    const layers = [await makeTar([{ name: "one", data: randomBytes(32 * 1024) }]), await makeTar([{ name: "two", data: randomBytes(32 * 1024) }])];
    const archive = await dockerSaveTar([{ image: imageOf(layers, { author: "kill points" }), tags: ["loaded:1"] }]);
    const steps = await trials("load", async () => undefined, () => bed.send("POST", "/images/load", archive), wholeOrAbsent("loaded:1", 2), removeImage("loaded:1"));
    expect(steps.filter((s) => s === "layer.recorded")).to.have.length(2);
  });

  it("pull of an image of two layers from a registry on loopback", async () => {
    registry = await startRegistry();
    const layers = [await makeTar([{ name: "first", data: randomBytes(48 * 1024) }]), await makeTar([{ name: "second", data: randomBytes(48 * 1024) }])];
    await pushImage(registry, "kill/pulled", "1", layers);
    const ref = `${registry.host}/kill/pulled:1`;
    const steps = await trials(
      "pull",
      async () => undefined,
      // (the answer is a progress stream, not one JSON value)
      () => bed.api("POST", `/images/create?fromImage=${encodeURIComponent(`${registry!.host}/kill/pulled`)}&tag=1`),
      wholeOrAbsent(ref, 2),
      removeImage(ref),
    );
    expect(steps).to.include.members(["layer.pending-marked", "layer.layout-renamed", "layer.recorded", "image.recorded"]);
  });
});
