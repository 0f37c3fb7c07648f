/**
 * Which exec processes get a terminal, against a real engined, as Docker's daemon (20.10)
 * answered the same requests: the exec's create `Tty` makes the terminal (its output has the
 * `\r\n` a pty gives, `tty` names a /dev/pts), the start's `Tty` only says whether the output
 * comes raw or in stdout/stderr frames. With the Docker CLI (which sends both) and dockerode
 * (whose `exec.start()` sends no `Tty`, so the output of a terminal comes framed).
 */
import "./helpers/root-hooks.js";
import { PassThrough, type Duplex } from "node:stream";
import { expect } from "chai";
import Docker from "dockerode";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("exec on a terminal", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let host: string;
  let client: Docker;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    d = await startEngined();
    host = `unix://${d.socket}`;
    client = new Docker({ socketPath: d.socket });
    ok(await docker(host, ["import", writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]), "import");
    ok(await docker(host, ["run", "-d", "--name", "tty-target", "busybox", "sleep", "600"]), "run");
  });

  after(async () => {
    await docker(host, ["rm", "-f", "tty-target"]);
    await d?.stop();
  });

  it("docker exec -t gives the process a terminal: its lines end in \\r\\n", async () => {
    expect(ok(await docker(host, ["exec", "-t", "tty-target", "sh", "-c", "echo a; echo b"]), "exec -t")).to.equal("a\r\nb\r\n");
    expect(ok(await docker(host, ["exec", "-t", "tty-target", "tty"]), "exec -t tty")).to.match(/^\/dev\/pts\/\d+\r\n$/);
    expect(ok(await docker(host, ["exec", "tty-target", "sh", "-c", "echo a; tty || true"]), "exec")).to.equal("a\nnot a tty\n");
  });

  /** Runs an exec made with `createTty` and started with `start`; what came out on stdout and stderr, and whether it was framed. */
  async function run(createTty: boolean, start: Record<string, unknown>) {
    const exec = await client.getContainer("tty-target").exec({ Cmd: ["sh", "-c", "echo a; tty; echo e >&2"], Tty: createTty, AttachStdout: true, AttachStderr: true });
    const stream = (await exec.start(start)) as unknown as Duplex;
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    await new Promise((resolve) => stream.once("end", resolve));
    const raw = Buffer.concat(chunks);
    const out = new PassThrough();
    const err = new PassThrough();
    let stdout = "";
    let stderr = "";
    out.on("data", (c: Buffer) => (stdout += c.toString()));
    err.on("data", (c: Buffer) => (stderr += c.toString()));
    const framed = raw[0] === 1 || raw[0] === 2;
    if (framed) {
      const s = new PassThrough();
      client.modem.demuxStream(s, out, err);
      const drained = new Promise((resolve) => s.once("end", resolve));
      s.end(raw);
      await drained;
    } else stdout = raw.toString();
    return { framed, stdout: stdout.replace(/pts\/\d+/, "pts/N"), stderr };
  }

  it("dockerode: the create's Tty makes the terminal, the start's Tty picks raw or framed output", async () => {
    // exec.start({}) sends no Tty: a terminal's output (one stream) comes framed as stdout
    expect(await run(true, {})).to.deep.equal({ framed: true, stdout: "a\r\n/dev/pts/N\r\ne\r\n", stderr: "" });
    expect(await run(true, { Tty: true })).to.deep.equal({ framed: false, stdout: "a\r\n/dev/pts/N\r\ne\r\n", stderr: "" });
    // no terminal asked at create: none at start either, whatever the start says; a raw stream
    // has no room for stderr, which Docker's daemon leaves out
    expect(await run(false, { Tty: true })).to.deep.equal({ framed: false, stdout: "a\nnot a tty\n", stderr: "" });
    expect(await run(false, {})).to.deep.equal({ framed: true, stdout: "a\nnot a tty\n", stderr: "e\n" });
  });
});
