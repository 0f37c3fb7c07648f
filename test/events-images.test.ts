/**
 * Image, network and commit events against a real engined, read back with `docker events
 * --since/--until`: import, tag, untag, delete, save, load, push and pull of images (a real
 * registry on 127.0.0.1), a network's create, connect, disconnect and destroy, and a container's
 * commit, in order, with Docker's actors and attributes, and the `image=` and `network=` filters.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { startNetDaemon } from "./helpers/net-daemon.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const nowSeconds = () => (Date.now() / 1000).toFixed(9);

interface Event {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
}

describe("events of images, networks and commits", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let rootfsTar: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  /** The events between two times, narrowed by filters, as objects. */
  const eventsOn = async (on: string, since: string, until: string, ...filters: string[]): Promise<Event[]> => {
    const out = ok(await docker(on, ["events", "--since", since, "--until", until, ...filters.flatMap((f) => ["--filter", f]), "--format", "{{json .}}"]), "docker events");
    return out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Event);
  };
  const events = (since: string, until: string, ...filters: string[]) => eventsOn(host, since, until, ...filters);
  const brief = (e: Event) => `${e.Type} ${e.Action} ${e.Actor.ID} ${e.Actor.Attributes.name ?? ""}`;

  before(async function () {
    work = makeTempDir("engine-events-images-");
    rootfsTar = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    host = `unix://${d.socket}`;
  });

  after(async () => d?.stop());

  it("import, tag, save, load, untag and delete an image", async () => {
    const since = nowSeconds();
    const id = ok(await docker(host, ["import", "-c", "LABEL team=blue", rootfsTar, "evimg:1"]), "import").trim();
    ok(await docker(host, ["tag", "evimg:1", "evimg:2"]), "tag");
    const archive = join(work, "saved.tar");
    ok(await docker(host, ["save", "-o", archive, "evimg:1"]), "save");
    ok(await docker(host, ["rmi", "evimg:2"]), "rmi evimg:2");
    ok(await docker(host, ["load", "-i", archive]), "load");
    ok(await docker(host, ["rmi", "evimg:1"]), "rmi evimg:1");
    const until = nowSeconds();

    const all = await events(since, until, "type=image");
    expect(all.map(brief)).to.deep.equal([
      `image tag ${id} evimg:1`,
      `image import ${id} ${id}`,
      `image tag ${id} evimg:2`,
      `image save ${id} ${id}`,
      `image untag ${id} ${id}`,
      `image load ${id} ${id}`,
      `image untag ${id} ${id}`,
      `image delete ${id} ${id}`,
    ]);
    // the image's labels while it exists; none once it is gone
    expect(all[0].Actor.Attributes).to.deep.equal({ name: "evimg:1", team: "blue" });
    expect(all[4].Actor.Attributes).to.deep.equal({ name: id, team: "blue" });
    expect(all[7].Actor.Attributes).to.deep.equal({ name: id });

    // image= matches the name with or without its tag, or the ID
    expect((await events(since, until, "image=evimg")).map((e) => e.Action)).to.deep.equal(["tag", "tag"]);
    expect((await events(since, until, "image=evimg:2")).map((e) => e.Action)).to.deep.equal(["tag"]);
    expect(await events(since, until, `image=${id}`)).to.have.length(8);
    expect((await events(since, until, `image=${id}`, "event=delete")).map((e) => e.Action)).to.deep.equal(["delete"]);
  });

  it("push and pull: the reference as the actor, its repository as the name", async function () {
    let reg: TestRegistry | undefined;
    try {
      reg = await startRegistry();
      const ref = `${reg.host}/evpush:1`;
      ok(await docker(host, ["import", rootfsTar, ref]), "import");
      const since = nowSeconds();
      ok(await docker(host, ["push", ref]), "push");
      ok(await docker(host, ["rmi", ref]), "rmi");
      ok(await docker(host, ["pull", ref]), "pull");
      const until = nowSeconds();
      const got = await events(since, until, "event=push", "event=pull");
      expect(got.map(brief)).to.deep.equal([`image push ${ref} ${reg.host}/evpush`, `image pull ${ref} ${reg.host}/evpush`]);
      expect((await events(since, until, `image=${reg.host}/evpush`)).map((e) => e.Action)).to.include.members(["push", "pull"]);
      ok(await docker(host, ["rmi", ref]), "rmi");
    } finally {
      await reg?.stop();
    }
  });

  it("a network's create, connect and disconnect (run, and a stopped container's), destroy", async () => {
    // in a namespace of its own: the networks and containers here get real bridges and veths
    const n = await startNetDaemon();
    try {
      const since = nowSeconds();
      const net = (await n.cli("network", "create", "evnet")).trim();
      const ran = (await n.cli("run", "-d", "--network", "evnet", "busybox", "true")).trim();
      await n.cli("wait", ran);
      const stopped = (await n.cli("create", "busybox", "true")).trim();
      await n.cli("network", "connect", "evnet", stopped);
      await n.cli("network", "disconnect", "evnet", stopped);
      await n.cli("rm", ran, stopped);
      await n.cli("network", "rm", "evnet");
      const until = nowSeconds();
      const at = (...filters: string[]) => eventsOn(n.host, since, until, ...filters);

      const got = await at("type=network", "network=evnet");
      expect(got.map((e) => `${e.Action} ${e.Actor.Attributes.container ?? "-"}`)).to.deep.equal([
        "create -",
        `connect ${ran}`,
        `disconnect ${ran}`,
        // a stopped container's connect only records the network; its disconnect is announced
        `disconnect ${stopped}`,
        "destroy -",
      ]);
      for (const e of got) {
        expect(e.Actor.ID).to.equal(net);
        expect(e.Actor.Attributes).to.include({ name: "evnet", type: "bridge" });
      }
      // a network filter also takes an ID prefix, and leaves other networks' events out
      expect(await at(`network=${net.slice(0, 6)}`)).to.have.length(5);
      expect(await at("network=host")).to.deep.equal([]);
      // the run's events, container's and network's, in Docker's order
      const run = (await at()).filter((e) => e.Actor.ID === ran || e.Actor.Attributes.container === ran).map((e) => `${e.Type} ${e.Action}`);
      expect(run).to.deep.equal(["container create", "network connect", "container start", "container die", "network disconnect", "container destroy"]);
    } finally {
      await n.stop();
    }
  });

  it("a commit: the new name's tag, then the container's commit with its comment, image ID and reference", async () => {
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', rootfsTar, "busybox"]), "import");
    const c = ok(await docker(host, ["create", "--name", "ev-commit", "--network", "none", "--label", "k=v", "busybox", "true"]), "create").trim();
    try {
      const since = nowSeconds();
      const id = ok(await docker(host, ["commit", "-m", "a note", "ev-commit", "evcommit:1"]), "commit").trim();
      const until = nowSeconds();
      const got = await events(since, until);
      expect(got.map(brief)).to.deep.equal([`image tag ${id} evcommit:1`, `container commit ${c} ev-commit`]);
      expect(got[1].Actor.Attributes).to.deep.equal({ comment: "a note", imageID: id, imageRef: "evcommit:1", image: "busybox", name: "ev-commit", k: "v" });
      ok(await docker(host, ["rmi", "evcommit:1"]), "rmi");
    } finally {
      await docker(host, ["rm", "-f", c]);
      await docker(host, ["rmi", "busybox"]);
    }
  });
});
