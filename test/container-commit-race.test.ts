/**
 * Commit (`pause=0`) and `docker diff` of a running container that swaps a directory for a
 * symlink to `/` and to a host folder as fast as it can: the walks of its writable layer (the
 * default driver here, overlay2: packLayer of its upper directory) must never follow the
 * symlink. Hundreds of rounds; no committed layer may hold a host name or a host byte, and no
 * diff may list one. The unit-level races, also for btrfs and zfs's tree walks, are in
 * layer-walk-race.test.ts.
 */
import "./helpers/root-hooks.js";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { extract } from "tar-stream";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

function api(socketPath: string, method: string, path: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** Names and data of the entries of a tar, and of the tars inside it (a saved image's layers). */
async function tarEntries(tar: Buffer, out: { name: string; data: Buffer }[] = []): Promise<{ name: string; data: Buffer }[]> {
  const ex = extract();
  Readable.from([tar]).pipe(ex as unknown as NodeJS.WritableStream);
  const inner: Buffer[] = [];
  for await (const e of ex) {
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    const data = Buffer.concat(chunks);
    out.push({ name: e.header.name, data });
    if (data.length >= 512 && data.subarray(257, 262).toString() === "ustar") inner.push(data);
  }
  for (const t of inner) await tarEntries(t, out);
  return out;
}

describe("commit and diff of a symlink-swapping container", function () {
  this.timeout(300_000);
  let d: TestDaemon;
  let host: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    const work = makeTempDir("engine-commit-race-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => d?.stop());

  it("never puts a host name or byte in a committed layer or a diff, in hundreds of rounds", async () => {
    const token = randomBytes(6).toString("hex");
    const hostDir = makeTempDir("engine-commit-race-host-");
    const secret = `host-secret-${token}`;
    writeFileSync(join(hostDir, `marker-${token}`), secret);
    writeFileSync(join(hostDir, "own"), secret); // a name the container's own `d/sub` has too
    // bounded: the loop ends by itself, and the container is removed at the end of the test
    const loop = [
      "mkdir -p /work; i=0",
      "while [ $i -lt 200000 ]; do",
      "  rm -rf /work/d; mkdir -p /work/d/sub; echo container-own > /work/d/sub/own",
      "  rm -rf /work/d; ln -s / /work/d",
      "  rm -rf /work/d; mkdir -p /work/d/sub; echo container-own > /work/d/sub/own",
      `  rm -rf /work/d; ln -s ${hostDir} /work/d`,
      "  i=$((i+1))",
      "done",
    ].join("\n");
    ok(await docker(host, ["run", "-d", "--name", "swapper", "--network", "none", "busybox", "sh", "-c", loop]), "run the swapper");
    // under /work/d, only what the container itself makes there may show
    const own = new Set(["work/d/", "work/d/sub/", "work/d/sub/own"]);
    const ownPaths = new Set(["/work/d", "/work/d/sub", "/work/d/sub/own"]);
    const images: string[] = [];
    try {
      const deadline = Date.now() + 200_000;
      let rounds = 0;
      let sawDir = 0;
      for (; rounds < 200 && Date.now() < deadline; rounds++) {
        const commit = await api(d.socket, "POST", "/v1.51/commit?container=swapper&pause=0");
        expect(commit.status, `commit ${rounds}: ${commit.body.toString()}`).to.equal(201);
        const id = (JSON.parse(commit.body.toString()) as { Id: string }).Id;
        images.push(id);
        const saved = await api(d.socket, "GET", `/v1.51/images/${id}/get`);
        expect(saved.status).to.equal(200);
        expect(saved.body.includes(token), `round ${rounds}: a host name or byte in the saved image`).to.equal(false);
        for (const e of await tarEntries(saved.body)) {
          if (e.name.startsWith("work/d/")) expect(own.has(e.name), `round ${rounds}: ${e.name} committed`).to.equal(true);
          if (e.name === "work/d/sub/own") sawDir++;
        }
        expect((await api(d.socket, "DELETE", `/v1.51/images/${id}`)).status).to.equal(200);
        images.pop();

        const diff = await api(d.socket, "GET", "/v1.51/containers/swapper/changes");
        expect(diff.status, `diff ${rounds}: ${diff.body.toString()}`).to.equal(200);
        for (const c of JSON.parse(diff.body.toString()) as { Path: string }[]) {
          expect(c.Path, `round ${rounds}`).to.not.include(token);
          if (c.Path.startsWith("/work/d/")) expect(ownPaths.has(c.Path), `round ${rounds}: ${c.Path} in the diff`).to.equal(true);
        }
      }
      expect(rounds, "rounds").to.be.at.least(200);
      expect(sawDir, "some commits caught the container's own directory").to.be.greaterThan(0);
    } finally {
      await docker(host, ["rm", "-f", "swapper"]);
      for (const id of images) await api(d.socket, "DELETE", `/v1.51/images/${id}?force=1`);
    }
  });
});
