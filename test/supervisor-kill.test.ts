/**
 * The supervisor's kill points: containers print numbered lines while the supervisor is killed
 * with SIGKILL and started again the way engined does it (`ensureSupervisor`), at random moments
 * and at each step of the drain where a kill is hardest to survive (between a write to the log
 * driver and the save of the drain's progress, on both sides of a rotation of the json-file log
 * or of the spool). Afterwards the json-file log holds each number exactly once, in order, and
 * every exit code is kept. Real conmon and runc. Below, the json-file logger's own part: what it
 * finds and repairs when made again with a mark (core/contracts/log.ts, "Exactly once").
 */
import "./helpers/root-hooks.js";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { createJsonFileLogger } from "../plugins/log-json-file/json-file.js";
import { makeTempDir } from "./helpers/engined.js";
import { checkJsonFiles, printNumbered } from "./helpers/numbered-lines.js";
import { SupervisorBed } from "./helpers/supervisor-bed.js";

/** The json-file log's files, oldest first. */
function jsonFiles(bed: SupervisorBed, id: string): string[] {
  const dir = join(bed.dir, "logs", id);
  const rotated = readdirSync(dir)
    .map((f) => /-json\.log\.(\d+)$/.exec(f))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => Number(m[1]))
    .sort((a, b) => b - a);
  return [...rotated.map((n) => `${bed.jsonLog(id)}.${n}`), bed.jsonLog(id)];
}

async function expectEveryLineOnce(bed: SupervisorBed, id: string, lines: number): Promise<void> {
  const check = await checkJsonFiles(jsonFiles(bed, id));
  expect(check.errors, id).to.deep.equal([]);
  expect([check.first, check.last, check.lines], id).to.deep.equal([1, lines, lines]);
}

/** A small seeded generator (mulberry32): a failing run repeats with its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("supervisor kill: no line lost or written twice", function () {
  this.timeout(600_000);
  const bed = new SupervisorBed("kill");

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    await bed.start();
  });
  after(async () => {
    await bed.close();
  });

  it("SIGKILLed at 10 random moments while two containers print, the logs have each line once and the exit codes are kept", async () => {
    const seed = Number(process.env.ENGINE_TEST_SEED ?? 27);
    const next = random(seed);
    const lines = 150_000;
    // One log never rotates; the other rotates every megabyte and keeps every file.
    const a = await bed.run(printNumbered(lines, { slowly: true, exitCode: 3 }));
    const b = await bed.run(printNumbered(lines, { slowly: true, exitCode: 5 }), { "max-size": "1m", "max-file": "100" });
    let kills = 0;
    for (; kills < 10; kills++) {
      const states = await bed.sup.client.list();
      if (states.every((s) => s.status === "exited")) break;
      await new Promise((r) => setTimeout(r, 100 + Math.floor(next() * 500)));
      await bed.killSupervisor();
      // The containers go on alone a moment; then the next supervisor takes their drains up.
      await new Promise((r) => setTimeout(r, Math.floor(next() * 200)));
      await bed.start();
    }
    expect(kills, `seed ${seed}: the containers ended before the supervisor was killed`).to.be.at.least(3);
    expect(await bed.sup.client.wait(a.id)).to.equal(3);
    expect(await bed.sup.client.wait(b.id)).to.equal(5);
    await expectEveryLineOnce(bed, a.id, lines);
    await expectEveryLineOnce(bed, b.id, lines);
    expect(jsonFiles(bed, b.id).length).to.be.above(5);
    await bed.remove(a.id);
    await bed.remove(b.id);
  });

  // Each point, reached once in a run: the supervisor kills itself there (host/supervisor/kill-point.ts).
  const points = [
    "drain-written", // the logger has a batch, its offset is not saved
    "drain-written:7",
    "checkpoint:1", // a rotation of the json-file log is due, nothing saved for it yet
    "checkpoint-saved:1", // saved before the rotation, the rotation not done
    "checkpoint:2", // rotated, the new file empty, not saved
    "checkpoint-saved:2",
    "spool-renamed", // the spool's live file renamed away, conmon not yet asked to reopen
    "spool-switched", // the drain reads the new live file, the old one not yet removed
  ];
  for (const point of points) {
    it(`SIGKILLed at ${point}: each line once, the exit code kept`, async () => {
      const lines = 60_000; // 6 MB: several rotations of the spool and of the json-file log
      await bed.killSupervisor();
      const sup = await bed.start({ ENGINE_SUPERVISOR_KILL_POINT: point });
      // The spool rotates only while conmon runs: under load awk may print all before the drain
      // reaches its first megabyte, so the container stays a while after its last line.
      const holdAfter = point.startsWith("spool-") ? 5 : 0;
      const { id } = await bed.run(printNumbered(lines, { exitCode: 9, holdAfter }), { "max-size": "1m", "max-file": "100" });
      expect(await bed.gone(sup.pid), `the supervisor reached ${point}`).to.equal(true);
      await sup.client.close();
      await bed.start();
      expect(await bed.sup.client.wait(id)).to.equal(9);
      await expectEveryLineOnce(bed, id, lines);
      await bed.remove(id);
    });
  }
});

describe("supervisor kill: the json-file logger resumed after a mark", () => {
  const ctx = (dir: string, options: Record<string, string> = {}) => ({
    containerId: "c0ffee",
    containerName: "/c",
    imageName: "i",
    imageId: "sha256:0",
    labels: {},
    env: [],
    logDir: dir,
    options,
  });
  const entry = (n: number) => `{"log":"${n}\\n","stream":"stdout","time":"2026-01-02T03:04:05Z"}\n`;
  const write = (path: string, from: number, to: number) => {
    let text = "";
    for (let n = from; n <= to; n++) text += entry(n);
    writeFileSync(path, text);
  };

  it("counts the whole lines past the mark and cuts a torn last one", async () => {
    const dir = makeTempDir();
    const path = join(dir, "c0ffee-json.log");
    write(path, 1, 5);
    const mark = { ino: statSync(path).ino, size: entry(1).length * 2 };
    writeFileSync(path, readFileSync(path, "utf8") + entry(6).slice(0, 20), { flag: "w" });
    const w = await createJsonFileLogger(ctx(dir), { mark });
    expect(w.storedAfterMark).to.equal(3);
    await w.write({ line: Buffer.from("7"), stream: "stdout", time: new Date(0) });
    await w.close();
    const logs = readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).log);
    expect(logs).to.deep.equal(["1\n", "2\n", "3\n", "4\n", "5\n", "7\n"]);
  });

  it("finds nothing past a mark of a file rotated away, and finishes a compression the kill cut short", async () => {
    const dir = makeTempDir();
    const path = join(dir, "c0ffee-json.log");
    write(path, 1, 3);
    const mark = { ino: statSync(path).ino, size: statSync(path).size };
    renameSync(path, `${path}.1`);
    writeFileSync(`${path}.1.gz.tmp`, "half");
    writeFileSync(path, "");
    const w = await createJsonFileLogger(ctx(dir, { "max-size": "1m", "max-file": "3", compress: "true" }), { mark });
    expect(w.storedAfterMark).to.equal(0);
    await w.close();
    expect(readdirSync(dir).sort()).to.deep.equal(["c0ffee-json.log", "c0ffee-json.log.1.gz"]);
  });

  it("closes the gap a shift of the rotated files left, so the rotation done again drops the right file", async () => {
    const dir = makeTempDir();
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "c0ffee-json.log");
    // Before the kill: .1 (3), .2 (2), .3 (1) and the current file (4); max-file 4. The kill
    // came after `.3` was dropped and `.2` moved to `.3`, before `.1` moved to `.2`.
    write(`${path}.3`, 2, 2);
    write(`${path}.1`, 3, 3);
    write(path, 4, 4);
    const mark = { ino: statSync(path).ino, size: statSync(path).size };
    const w = await createJsonFileLogger(ctx(dir, { "max-size": "10", "max-file": "4" }), { mark });
    expect(w.storedAfterMark).to.equal(0);
    expect(existsSync(`${path}.2`) && !existsSync(`${path}.3`)).to.equal(true);
    // The rotation the kill interrupted, done again by the next write.
    await w.write({ line: Buffer.from("5"), stream: "stdout", time: new Date(0) });
    await w.close();
    const first = (f: string) => JSON.parse(readFileSync(f, "utf8").split("\n")[0]).log;
    expect([`${path}.3`, `${path}.2`, `${path}.1`, path].map(first)).to.deep.equal(["2\n", "3\n", "4\n", "5\n"]);
  });
});
