/**
 * What the registry client tests (test/registry-clients*.test.ts) share: `clientSuite()` sets up a
 * suite with one engined started with --debug (the log credentials must never appear in), a
 * dockerode client of it and the busybox root filesystem as a tar; it gives private DOCKER_CONFIG
 * folders, the Docker CLI against that engined, test registries, and a busybox image imported.
 * After each test no container or image is left in the daemon and the test's registries are
 * stopped; after the suite the config folders go and the daemon is stopped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import Docker from "dockerode";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./engined.js";
import { startRegistry, type TestRegistry } from "./registry.js";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";

/** Lines of a command's output, without empty ones. */
export const linesOf = (text: string) => text.split("\n").map((l) => l.trimEnd()).filter(Boolean);

export interface ClientSuite {
  /** The engined of the suite (started in its `before` hook). */
  readonly d: TestDaemon;
  /** A dockerode client of that engined. */
  readonly client: Docker;
  /** The busybox root filesystem as a tar file. */
  readonly rootfsTar: string;
  newConfig(): string;
  cli(config: string, args: string[], input?: string): Promise<RunResult>;
  ok(config: string, args: string[], input?: string): Promise<RunResult>;
  registry(opts: Parameters<typeof startRegistry>[0]): Promise<TestRegistry>;
  importBusybox(config: string): Promise<string>;
}

/** Registers the suite's hooks (call it in a `describe`); its engined is there from the first test. */
export function clientSuite(): ClientSuite {
  let d: TestDaemon;
  let client: Docker;
  let work: string;
  let rootfsTar: string;
  const configs: string[] = [];
  const registries: TestRegistry[] = [];

  /** A private DOCKER_CONFIG folder (kept for the test: login writes to it), removed after the run. */
  const newConfig = () => {
    const dir = mkdtempSync(join(tmpdir(), "engine-docker-config-"));
    configs.push(dir);
    return dir;
  };

  /** The Docker CLI against engined with this config folder. */
  const cli = (config: string, args: string[], input?: string): Promise<RunResult> =>
    runCommand("docker", ["-H", `unix://${d.socket}`, ...args], {
      env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined, DOCKER_CONFIG: config },
      timeoutMs: 60_000,
      input,
    });

  const ok = async (config: string, args: string[], input?: string) => {
    const r = await cli(config, args, input);
    expect(r.code, `docker ${args.join(" ")}:\n${r.stderr}\n${r.stdout}`).to.equal(0);
    return r;
  };

  const registry = async (opts: Parameters<typeof startRegistry>[0]) => {
    const reg = await startRegistry(opts);
    registries.push(reg);
    return reg;
  };

  /** Imports the busybox root filesystem: the new image's ID. */
  const importBusybox = async (config: string) => {
    const r = await ok(config, ["import", "--change", 'CMD ["sh"]', rootfsTar]);
    const id = r.stdout.trim();
    expect(id).to.match(/^sha256:[0-9a-f]{64}$/);
    return id;
  };

  before(async function () {
    work = makeTempDir("engine-registry-clients-");
    rootfsTar = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    // --debug: the log the credentials must never appear in.
    d = await startEngined({ args: ["--debug"] });
    client = new Docker({ socketPath: d.socket });
  });

  afterEach(async function () {
    if (!d) return;
    const list = await client.listContainers({ all: true }).catch(() => []);
    await Promise.all(list.map((c) => client.getContainer(c.Id).remove({ force: true }).catch(() => {})));
    // No image (and so no layer) outlives a test: the next test's pull has to download.
    const images = await client.listImages({ all: true }).catch(() => []);
    for (const i of images) await client.getImage(i.Id).remove({ force: true }).catch(() => {});
    while (registries.length) await registries.pop()!.stop();
  });

  after(async function () {
    while (registries.length) await registries.pop()!.stop();
    for (const c of configs) rmSync(c, { recursive: true, force: true });
    await d?.stop();
  });

  return {
    get d() {
      return d;
    },
    get client() {
      return client;
    },
    get rootfsTar() {
      return rootfsTar;
    },
    newConfig,
    cli,
    ok,
    registry,
    importBusybox,
  };
}
