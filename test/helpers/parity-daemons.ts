/**
 * The daemons of a describe block that compares engined with Docker's own daemon: both started
 * before its tests (which are skipped where `dockerd` is not installed), each with busybox
 * imported; every container removed after each test; both stopped after the block.
 */
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { removeAllContainers } from "./daemon-compare.js";
import { docker } from "./docker-cli.js";
import { have, startDockerd, type Dockerd } from "./dockerd.js";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";

/** Registers the block's hooks; the result gives both daemons' hosts once they run. */
export function useParityDaemons(prefix: string): () => { engined: string; dockerd: string } {
  let d: TestDaemon | undefined;
  let ref: Dockerd | undefined;
  const hosts = () => ({ engined: `unix://${d!.socket}`, dockerd: ref!.host });

  before(async function () {
    if (!have("dockerd")) this.skip();
    const tar = writeFixture(makeTempDir(prefix), "rootfs.tar", await busyboxRootfs());
    [d, ref] = await Promise.all([startEngined(), startDockerd()]);
    for (const host of Object.values(hosts())) {
      const r = await docker(host, ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", tar, "busybox"]);
      expect(r.code, r.stderr).to.equal(0);
    }
  });
  afterEach(async function () {
    for (const host of d && ref ? Object.values(hosts()) : []) await removeAllContainers(host);
  });
  after(async function () {
    await d?.stop();
    await ref?.stop();
  });
  return hosts;
}
