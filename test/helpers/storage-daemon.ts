/**
 * An engined on a given storage driver for a describe block of a driver's test file: started
 * before its tests with busybox imported (the host's busybox, as test/fixtures/images.ts makes
 * it), and after them rid of its containers and stopped.
 */
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { docker } from "./docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./engined.js";

export interface StorageDaemon {
  daemon(): TestDaemon;
  /** `unix://<socket>`, for the Docker CLI's -H. */
  host(): string;
}

/** The output of a docker run that must succeed (`what` names it when it does not). */
export function ok(r: RunResult, what: string): string {
  expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
  return r.stdout;
}

/** Registers the before and after hooks; `args()` is read at start (the data root may be made in an earlier hook). */
export function storageDaemon(args: () => string[]): StorageDaemon {
  let d: TestDaemon | undefined;
  before(async () => {
    d = await startEngined({ args: args() });
    const work = makeTempDir("engine-storage-cli-");
    ok(await docker(`unix://${d.socket}`, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });
  after(async () => {
    if (!d) return;
    const host = `unix://${d.socket}`;
    const ids = (await docker(host, ["ps", "-aq"])).stdout.split("\n").filter(Boolean);
    if (ids.length) await docker(host, ["rm", "-f", ...ids]);
    await d.stop();
    d = undefined;
  });
  const daemon = () => {
    if (!d) throw new Error("the storage test daemon is not running");
    return d;
  };
  return { daemon, host: () => `unix://${daemon().socket}` };
}
