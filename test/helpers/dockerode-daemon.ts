/**
 * An engined for tests that drive it through dockerode: a `busybox` image imported from the
 * host's busybox-static (through the Docker CLI, as the README does) and a client on its socket.
 */
import { expect } from "chai";
import Docker from "dockerode";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { docker } from "./docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";

export async function startWithBusybox(): Promise<{ d: TestDaemon; client: Docker }> {
  const dir = makeTempDir();
  const d = await startEngined();
  const r = await docker(`unix://${d.socket}`, ["import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox"]);
  expect(r.code, r.stderr).to.equal(0);
  return { d, client: new Docker({ socketPath: d.socket }) };
}

/** Removes every container of the daemon (what a test left). */
export async function removeContainers(client: Docker): Promise<void> {
  const list = await client.listContainers({ all: true }).catch(() => []);
  await Promise.all(list.map((c) => client.getContainer(c.Id).remove({ force: true }).catch(() => {})));
}

/**
 * Mocha hooks for a describe block: the daemon started before its tests, their containers
 * removed after each, the daemon stopped after all. The fields are set once `before` ran.
 */
export function busyboxDaemonHooks(): { d: TestDaemon; client: Docker } {
  const ctx = {} as { d: TestDaemon; client: Docker };
  before(async function () {
    Object.assign(ctx, await startWithBusybox());
  });
  afterEach(async function () {
    if (ctx.client) await removeContainers(ctx.client);
  });
  after(async function () {
    await ctx.d?.stop();
  });
  return ctx;
}
