/** The container records (core/containers/container-store.ts): a removed container stays removed. */
import { expect } from "chai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ContainerStore, type ContainerRecord } from "../core/containers/container-store.js";
import { makeTempDir } from "./helpers/engined.js";

const ID = "ab".repeat(32);

function record(): ContainerRecord {
  return { Id: ID, Name: "/c", State: { Status: "exited" } } as unknown as ContainerRecord;
}

describe("container store", () => {
  it("does not bring back a removed container when a late change to it is saved (an exit or an update that raced a docker rm -f)", async () => {
    const root = makeTempDir("engine-container-store-");
    const store = new ContainerStore(root);
    const c = record();
    await store.add(c);
    expect(store.has(ID)).to.equal(true);
    await store.remove(ID);
    // the change a request made to the record it held before the removal
    await store.save({ ...c, State: { ...c.State, Status: "running" } } as ContainerRecord);
    expect(store.has(ID)).to.equal(false);
    expect(store.list()).to.deep.equal([]);
    expect(existsSync(join(root, ID))).to.equal(false);
    // and a daemon started again finds nothing
    expect(new ContainerStore(root).list()).to.deep.equal([]);
  });
});
