/**
 * The daemon's state is written off the event loop (core/fs/durable-file.ts,
 * core/fs/record-writer.ts) and still survives a kill -9 mid-write: a record is old or new,
 * never torn; a client told of a record finds it after a restart; temporary files a crash left
 * are removed when the stores open. Checked on the writers themselves, in a process killed
 * while it writes, and on engined killed during a burst of creates.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { removeTempFiles, TEMP_PREFIX, writeFileDurably } from "../core/fs/durable-file.js";
import { RecordWriter } from "../core/fs/record-writer.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const temporaries = (dir: string) => readdirSync(dir).filter((n) => n.startsWith(TEMP_PREFIX));

describe("state durability", function () {
  describe("the writers", function () {
    it("coalesces a burst of saves of one record into at most two writes, the last one whole", async () => {
      const dir = makeTempDir("engine-durable-");
      const file = join(dir, "rec.json");
      const writer = new RecordWriter();
      let rendered = 0;
      const saves = Array.from({ length: 50 }, (_, i) =>
        writer.write(file, () => {
          rendered++;
          return JSON.stringify({ version: i });
        }),
      );
      await Promise.all(saves);
      expect(rendered).to.be.at.most(2);
      expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal({ version: 49 });
      expect(temporaries(dir)).to.deep.equal([]);
      // a save after the burst is written again
      await writer.write(file, () => JSON.stringify({ version: 50 }));
      expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal({ version: 50 });
    });

    it("writes records of several paths at once, each save answered once its own record is on disk", async () => {
      const dir = makeTempDir("engine-durable-");
      const writer = new RecordWriter();
      const order: string[] = [];
      await Promise.all(Array.from({ length: 16 }, (_, i) => writer.write(join(dir, `${i}.json`), () => `{"n":${i}}`).then(() => order.push(readFileSync(join(dir, `${i}.json`), "utf8")))));
      expect(order).to.have.length(16);
      expect(readdirSync(dir).filter((n) => n.endsWith(".json"))).to.have.length(16);
      expect(temporaries(dir)).to.deep.equal([]);
    });

    it("forget: a queued write never happens, the one under way ends first, so a removal after it sticks", async () => {
      const dir = makeTempDir("engine-durable-");
      const file = join(dir, "rec.json");
      const writer = new RecordWriter();
      let rendered = 0;
      const render = () => (rendered++, "{}");
      const first = writer.write(file, render);
      const queued = writer.write(file, render);
      const gone = writer.forget(file);
      await Promise.all([first, queued, gone]);
      expect(rendered).to.equal(1);
      // the caller removes the file after forget: nothing writes it again
      rmSync(file);
      await sleep(50);
      expect(existsSync(file)).to.equal(false);
    });

    it("rejects a write whose folder is gone, leaving nothing; removeTempFiles removes only temporaries", async () => {
      const dir = makeTempDir("engine-durable-");
      let failed: unknown;
      await new RecordWriter().write(join(dir, "missing", "rec.json"), () => "{}").catch((err) => (failed = err));
      expect((failed as NodeJS.ErrnoException).code).to.equal("ENOENT");
      writeFileSync(join(dir, `${TEMP_PREFIX}abc`), "half");
      writeFileSync(join(dir, "keep.json"), "{}");
      removeTempFiles(dir);
      expect(readdirSync(dir).sort()).to.deep.equal(["keep.json"]);
    });

    it("leaves the old record or the new one, never a torn one, when its process is killed with SIGKILL mid-write", async function () {
      this.timeout(120_000);
      const dir = makeTempDir("engine-durable-");
      const file = join(dir, "rec.json");
      await writeFileDurably(file, JSON.stringify({ generation: -1, pad: "" }));
      // a writer that rewrites a 2 MiB record as fast as it can, through the daemon's writer
      const script = `
        const { RecordWriter } = await import(${JSON.stringify(resolve(ROOT, "dist/core/fs/record-writer.js"))});
        const writer = new RecordWriter();
        const pad = "x".repeat(2 * 1024 * 1024);
        for (let generation = 0; ; generation++) await writer.write(${JSON.stringify(file)}, () => JSON.stringify({ generation, pad }));
      `;
      let seen = -1;
      for (let trial = 0; trial < 12; trial++) {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
        await sleep(150 + Math.floor(Math.random() * 250));
        child.kill("SIGKILL");
        await new Promise((r) => child.once("exit", r));
        const rec = JSON.parse(readFileSync(file, "utf8")) as { generation: number; pad: string };
        expect(rec.pad.length === 0 || rec.pad.length === 2 * 1024 * 1024, "a whole record").to.equal(true);
        seen = Math.max(seen, rec.generation);
        removeTempFiles(dir);
        expect(readdirSync(dir)).to.deep.equal(["rec.json"]);
      }
      expect(seen, "some writes finished before a kill").to.be.at.least(0);
    });
  });

  describe("engined killed during a burst of creates", function () {
    this.timeout(180_000);
    const daemons: TestDaemon[] = [];
    before(function () {
      if (process.getuid?.() !== 0) this.skip();
    });
    after(async () => {
      for (const d of daemons.splice(0)) await d.stop();
    });

    it("lists every container and volume it answered for, each record whole, and no temporary file", async () => {
      const dir = makeTempDir("engine-durable-");
      const socket = join(dir, "engine.sock");
      const dataRoot = join(dir, "data");
      const start = async () => {
        const d = await startEngined({
          hosts: [`unix://${socket}`],
          args: ["--data-root", dataRoot, "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "engine.pid")],
        });
        daemons.push(d);
        return d;
      };
      const first = await start();
      const imported = await docker(`unix://${socket}`, ["import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox"]);
      expect(imported.code, imported.stderr).to.equal(0);

      // 32 creates and 8 volume creates at once; the daemon is killed once a few are answered
      const answered = { containers: new Set<string>(), volumes: new Set<string>() };
      const where = { socketPath: socket };
      const burst = [
        ...Array.from({ length: 32 }, (_, i) =>
          httpRequest(where, "POST", `/v1.51/containers/create?name=burst${i}`, { Image: "busybox", Cmd: ["true"], Labels: { burst: String(i) } })
            .then((r) => r.status === 201 && answered.containers.add(`/burst${i}`))
            .catch(() => undefined),
        ),
        ...Array.from({ length: 8 }, (_, i) =>
          httpRequest(where, "POST", "/v1.51/volumes/create", { Name: `burstvol${i}` })
            .then((r) => r.status === 201 && answered.volumes.add(`burstvol${i}`))
            .catch(() => undefined),
        ),
      ];
      const until = Date.now() + 60_000;
      while (answered.containers.size < 6 && Date.now() < until) await sleep(2);
      first.proc.kill("SIGKILL");
      await new Promise((r) => first.proc.once("exit", r));
      await Promise.all(burst);
      expect(answered.containers.size, "creates answered before the kill").to.be.at.least(6);

      await start();
      const listed = JSON.parse((await httpRequest(where, "GET", "/v1.51/containers/json?all=1")).body) as { Id: string; Names: string[] }[];
      const names = listed.map((c) => c.Names[0]);
      for (const name of answered.containers) expect(names, `${name} was answered 201`).to.include(name);
      expect(new Set(names).size).to.equal(names.length);
      // every record on disk is whole, and the one of a listed container
      const containersDir = join(dataRoot, "containers");
      const folders = readdirSync(containersDir).filter((n) => /^[a-f0-9]{64}$/.test(n));
      for (const c of listed) expect(folders).to.include(c.Id);
      for (const id of folders) {
        const rec = JSON.parse(readFileSync(join(containersDir, id, "config.json"), "utf8")) as { Id: string; Name: string; State: { Status: string }; Config: { Labels: Record<string, string> } };
        expect(rec.Id).to.equal(id);
        expect(rec.Name).to.match(/^\/burst\d+$/);
        expect(rec.Config.Labels.burst).to.equal(rec.Name.slice("/burst".length));
        expect(rec.State.Status).to.equal("created");
        expect(temporaries(join(containersDir, id))).to.deep.equal([]);
      }
      const volumes = (JSON.parse((await httpRequest(where, "GET", "/v1.51/volumes")).body) as { Volumes: { Name: string }[] }).Volumes.map((v) => v.Name);
      for (const name of answered.volumes) expect(volumes, `${name} was answered 201`).to.include(name);
      const meta = join(dataRoot, "volumes", "_meta");
      for (const f of readdirSync(meta).filter((n) => n.endsWith(".json"))) expect(JSON.parse(readFileSync(join(meta, f), "utf8")).Name).to.equal(f.slice(0, -5));
      expect(temporaries(meta)).to.deep.equal([]);
      for (const sub of ["image", join("image", "images"), join("image", "layers"), join("image", "distribution"), "network"]) {
        expect(temporaries(join(dataRoot, sub)), sub).to.deep.equal([]);
      }

      // the daemon works on with what it found: a listed container runs, and all of them go
      const run = await docker(`unix://${socket}`, ["start", "-a", listed[0].Id]);
      expect(run.code, run.stderr).to.equal(0);
      for (const c of listed) expect((await httpRequest(where, "DELETE", `/v1.51/containers/${c.Id}?force=1`)).status).to.equal(204);
      for (const name of volumes) expect((await httpRequest(where, "DELETE", `/v1.51/volumes/${name}`)).status).to.equal(204);
    });
  });
});
