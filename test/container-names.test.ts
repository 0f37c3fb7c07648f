/**
 * Container names are indexed (core/containers/container-store.ts): a lookup or a claim by name
 * reads no other record, and a name is claimed from the moment a create or a rename takes it,
 * not only once the record is saved. Creates that ask for the same name at the same time: one
 * gets it, the others Docker's 409, never two containers of one name. A create that fails gives
 * its name back; a rename frees the old name; a removal frees it; a reopened store knows them.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { join } from "node:path";
import { ContainerStore, newState, type ContainerRecord } from "../core/containers/container-store.js";
import { EngineError } from "../core/errors.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { docker } from "./helpers/docker-cli.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const record = (store: ContainerStore, id: string, name: string): ContainerRecord => ({
  Id: id, Name: name, Created: new Date().toISOString(), Path: "true", Args: [], Config: {} as ContainerRecord["Config"],
  HostConfig: {}, Image: "sha256:x", Driver: "overlay2", LogPath: join(store.dir(id), `${id}-json.log`), State: newState(),
});

const conflict = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(EngineError);
    expect((err as EngineError).statusCode).to.equal(409);
    return (err as Error).message;
  }
  throw new Error("no 409");
};

describe("container names: the store's index", () => {
  it("claims a name for one id until it is added or released, and frees it at a rename and a removal", async () => {
    const dir = makeTempDir();
    const store = new ContainerStore(join(dir, "containers"));
    const a = store.newId();
    const b = store.newId();
    expect(store.claimName("web", a)).to.equal("/web");
    // claimed, not saved: another id cannot have it, nor find a container by it
    expect(conflict(() => store.claimName("/web", b))).to.include(a);
    expect(() => store.get("web")).to.throw(/No such container/);
    store.releaseName("/web", a);
    expect(store.claimName("web", b)).to.equal("/web");
    await store.add(record(store, b, "/web"));
    // saved: a release by the create that made it changes nothing
    store.releaseName("/web", b);
    expect(store.get("web").Id).to.equal(b);
    expect(conflict(() => store.claimName("web", a))).to.include(b);

    // a rename: the new name found, the old one free for another
    const c = store.get("web");
    c.Name = store.claimName("api", b);
    await store.save(c);
    expect(store.get("/api").Id).to.equal(b);
    expect(() => store.get("web")).to.throw(/No such container/);
    expect(store.claimName("web", a)).to.equal("/web");
    await store.add(record(store, a, "/web"));

    // a reopened store knows the saved names
    const again = new ContainerStore(join(dir, "containers"));
    expect(again.get("api").Id).to.equal(b);
    expect(again.get("/web").Id).to.equal(a);
    expect(conflict(() => again.claimName("api", again.newId()))).to.include(b);

    // a removal frees the name
    await store.remove(b);
    expect(() => store.get("api")).to.throw(/No such container/);
    expect(store.claimName("api", store.newId())).to.equal("/api");
  });

  it("finds both records of a name that two creates made before names were claimed, one after the other", async () => {
    const dir = join(makeTempDir(), "containers");
    const store = new ContainerStore(dir);
    const ids = [store.newId(), store.newId()];
    // as the creates at once of an older engined left them: two saved records of one name
    for (const id of ids) await store.add(record(store, id, "/twin"));
    const reopened = new ContainerStore(dir);
    const first = reopened.get("twin").Id;
    expect(ids).to.include(first);
    await reopened.remove(first);
    expect(reopened.get("twin").Id).to.equal(ids.find((id) => id !== first));
  });

  it("generates a different name for each of 1,000 containers", async () => {
    const store = new ContainerStore(join(makeTempDir(), "containers"));
    const names = new Set<string>();
    // claims, and a few of them saved: a claimed name is as taken as a saved one
    for (let i = 0; i < 1000; i++) {
      const id = store.newId();
      const name = store.claimName(undefined, id);
      if (i % 100 === 0) await store.add(record(store, id, name));
      names.add(name);
    }
    expect(names.size).to.equal(1000);
    for (const name of [...names].filter((_, i) => i % 100 === 0)) expect(store.get(name).Name).to.equal(name);
  });
});

describe("container names: creates at the same time", () => {
  let d: TestDaemon;
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, path, body);

  before(async () => {
    d = await startEngined();
    const imported = await docker(`unix://${d.socket}`, ["import", writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(imported.code, imported.stderr).to.equal(0);
  });
  after(async () => {
    await d?.stop();
  });

  it("gives a name asked for by 8 creates at once to one of them; the others get Docker's 409", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => api("POST", "/v1.41/containers/create?name=twin", { Image: "busybox", Cmd: ["true"], HostConfig: { NetworkMode: "none" } })));
    const made = answers.filter((r) => r.status === 201);
    expect(made, answers.map((r) => `${r.status} ${r.body}`).join("\n")).to.have.length(1);
    const id = JSON.parse(made[0].body).Id as string;
    for (const r of answers.filter((x) => x.status !== 201)) {
      expect(r.status).to.equal(409);
      expect(JSON.parse(r.body).message).to.equal(`Conflict. The container name "/twin" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`);
    }
    const list = JSON.parse((await api("GET", "/v1.41/containers/json?all=1")).body) as { Names: string[] }[];
    expect(list.filter((c) => c.Names.includes("/twin"))).to.have.length(1);
    expect((await api("DELETE", `/v1.41/containers/${id}`)).status).to.equal(204);
  });

  it("gives the name of a create that failed back", async () => {
    const failed = await api("POST", "/v1.41/containers/create?name=again", { Image: "busybox", Cmd: [], Entrypoint: [], HostConfig: { NetworkMode: "none" } });
    expect(failed.status, failed.body).to.equal(400);
    const made = await api("POST", "/v1.41/containers/create?name=again", { Image: "busybox", Cmd: ["true"], HostConfig: { NetworkMode: "none" } });
    expect(made.status, made.body).to.equal(201);
    expect((await api("DELETE", "/v1.41/containers/again")).status).to.equal(204);
  });
});
