/**
 * `POST /build` given bad input, and what a failed build leaves: every bad input of issue 26
 * answered with Docker's message (a 4xx where dockerd 20.10 answers 500, as docs/errors.md
 * says), compared with Docker's own daemon where it can run the same request; and after each,
 * nothing of the build is left: no container (Docker keeps a failed RUN's container unless
 * `forcerm`: so does engined), no image but those of the steps that succeeded, no mount under
 * the daemon's roots, nothing in its `tmp/build`, `builder/pending` or `exec/build` folders. A
 * client that goes away mid-RUN takes its container with it; a daemon killed with SIGKILL in
 * the middle of a RUN or a COPY finds what the build left at its next start and removes it
 * (the RUN container stays listed, Exited (137), as dockerd 20.10's does).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { contextTar, leftovers, NOTHING_LEFT, settledLeftovers, postBuild, type BuildAnswer, type BuildRequest } from "./helpers/build-api.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { have, startDockerd, type Dockerd } from "./helpers/dockerd.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";

interface BadInput {
  what: string;
  /** The request's body; `registry` is the loopback registry's address. */
  body: (registry: string) => Promise<Buffer>;
  query?: BuildRequest["query"];
  /** Answered before the stream: the status and message; else the stream's error. */
  status?: number;
  /** dockerd's status when it differs (its 500s). */
  dockerStatus?: number;
  message: string | ((registry: string) => string);
  /** dockerd's message when ours differs on purpose (docs/errors.md), or as Docker 28 differs from the 20.10 here. */
  dockerMessage?: string;
  /** Images the steps before the failure made. */
  newImages: number;
  /** Containers Docker keeps (a failed RUN's, without forcerm). */
  keptContainers?: number;
  /** Not for dockerd: it reaches nothing outside its namespace (the loopback registry). */
  engineOnly?: boolean;
}

const files = (dockerfile: string, extra: Record<string, string> = {}) => () => contextTar({ Dockerfile: dockerfile, ...extra });

/** Each case makes its own step image first (an ENV with a value of its own), so the new images are countable. */
const CASES: BadInput[] = [
  {
    what: "a context that is not an archive",
    body: async () => Buffer.from("hello, not a tar\n"),
    status: 400,
    dockerStatus: 500,
    message: "the build context is not a tar archive (plain, or compressed with gzip, bzip2, xz or zstd): Unexpected end of data",
    dockerMessage: "unexpected EOF",
    newImages: 0,
  },
  {
    what: "a gzip stream that holds no tar",
    body: async () => gzipSync("hello, not a tar\n"),
    status: 400,
    dockerStatus: 500,
    message: "the build context is not a tar archive (plain, or compressed with gzip, bzip2, xz or zstd): Unexpected end of data",
    dockerMessage: "unexpected EOF",
    newImages: 0,
  },
  { what: "a context without its Dockerfile", body: () => contextTar({ f: "x" }), status: 400, dockerStatus: 500, message: "Cannot locate specified Dockerfile: Dockerfile", newImages: 0 },
  {
    what: "a dockerfile parameter naming no file",
    body: files("FROM busybox\n"),
    query: { dockerfile: "sub/Dockerfile.dev" },
    status: 400,
    dockerStatus: 500,
    message: "Cannot locate specified Dockerfile: sub/Dockerfile.dev",
    newImages: 0,
  },
  { what: "a Dockerfile that does not parse (its line named)", body: files("FROM busybox\nENV E=1\nHEALTHCHECK --interval=x CMD true\n"), status: 400, message: 'dockerfile parse error on line 3: time: invalid duration "x"', dockerMessage: 'dockerfile parse error line 3: time: invalid duration "x"', newImages: 0 },
  { what: "an instruction without its arguments", body: files("FROM busybox\nENV\n"), status: 400, message: "dockerfile parse error on line 2: ENV requires at least one argument", dockerMessage: "dockerfile parse error line 2: ENV requires at least one argument", newImages: 0 },
  { what: "an unknown instruction", body: files("FROM busybox\nENV E=2\nFOO bar\n"), status: 400, message: "dockerfile parse error on line 3: unknown instruction: FOO (did you mean FROM?)", dockerMessage: "dockerfile parse error line 3: unknown instruction: FOO", newImages: 0 },
  { what: "a COPY source outside the context", body: files("FROM busybox\nENV E=3\nCOPY ../x /x\n"), message: "COPY failed: forbidden path outside the build context: ../x ()", newImages: 1 },
  {
    what: "a missing COPY source",
    body: files("FROM busybox\nENV E=4\nCOPY there nope /x/\n", { there: "x" }),
    message: "COPY failed: file not found in build context or excluded by .dockerignore: stat nope: file does not exist",
    newImages: 1,
  },
  { what: "a COPY pattern that matches nothing", body: files("FROM busybox\nENV E=5\nCOPY *.none /x/\n"), message: "COPY failed: no source files were specified", newImages: 1 },
  {
    what: "a FROM of an image neither local nor in the registry",
    body: (registry) => contextTar({ Dockerfile: `FROM ${registry}/nope:1\n` }),
    message: (registry) => `manifest for ${registry}/nope:1 not found: manifest unknown: manifest unknown`,
    newImages: 0,
    engineOnly: true,
  },
  {
    what: "a COPY --from of an image neither local nor in the registry (the flag named)",
    body: (registry) => contextTar({ Dockerfile: `FROM busybox\nENV E=8\nCOPY --from=${registry}/nope:2 /x /y\n` }),
    message: (registry) => `invalid from flag value ${registry}/nope:2: manifest for ${registry}/nope:2 not found: manifest unknown: manifest unknown`,
    newImages: 1,
    engineOnly: true,
  },
  { what: "a failed RUN, forcerm", body: files("FROM busybox\nENV E=6\nRUN echo before; exit 3\n"), query: { forcerm: "1" }, message: "The command '/bin/sh -c echo before; exit 3' returned a non-zero code: 3", newImages: 1 },
  { what: "a failed RUN (its container kept, as Docker keeps it)", body: files("FROM busybox\nENV E=7\nRUN exit 4\n"), message: "The command '/bin/sh -c exit 4' returned a non-zero code: 4", newImages: 1, keptContainers: 1 },
];

describe("build errors: bad input, and nothing left behind", function () {
  this.timeout(300_000);
  let d: TestDaemon;
  let ref: Dockerd | undefined;
  let registry: TestRegistry;
  let rootfs: string;

  const cli = async (host: string, ...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const lines = (text: string) => text.split("\n").filter(Boolean);
  const images = async (host: string) => new Set(lines(await cli(host, "images", "-aq", "--no-trunc")));
  const containers = async (host: string) => lines(await cli(host, "ps", "-aq"));

  before(async () => {
    const work = makeTempDir("engine-build-errors-");
    rootfs = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    await cli(`unix://${d.socket}`, "import", "-c", 'CMD ["sh"]', rootfs, "busybox");
    registry = await startRegistry();
    if (have("dockerd")) {
      ref = await startDockerd();
      await cli(ref.host, "import", "-c", 'CMD ["sh"]', rootfs, "busybox");
    }
  });
  after(async () => {
    await d?.stop();
    await ref?.stop();
    await registry?.stop();
  });

  /** Runs one bad input against a daemon; checks the answer and what is left; removes the containers Docker keeps. */
  async function check(host: string, socket: string, c: BadInput, isDockerd: boolean): Promise<BuildAnswer> {
    const before = await images(host);
    const answer = await postBuild(socket, { body: await c.body(registry.host), query: c.query });
    const message = typeof c.message === "function" ? c.message(registry.host) : isDockerd ? (c.dockerMessage ?? c.message) : c.message;
    if (c.status !== undefined) {
      expect(answer.status, `${c.what}: ${answer.body}`).to.equal(isDockerd ? (c.dockerStatus ?? c.status) : c.status);
      expect(JSON.parse(answer.body).message, c.what).to.equal(message);
    } else {
      expect(answer.status, c.what).to.equal(200);
      expect(answer.error, `${c.what}: ${answer.text}`).to.equal(message);
    }
    const after = await images(host);
    const made = [...after].filter((id) => !before.has(id));
    expect(made, `${c.what}: the images made`).to.have.length(c.newImages);
    expect([...before].filter((id) => !after.has(id)), `${c.what}: images lost`).to.deep.equal([]);
    const kept = await containers(host);
    expect(kept, `${c.what}: containers left`).to.have.length(c.keptContainers ?? 0);
    if (kept.length) await cli(host, "rm", ...kept);
    return answer;
  }

  for (const c of CASES) {
    it(`${c.what}: ${c.status ? `a ${c.status} before the stream` : "the stream's error"}, and nothing left`, async () => {
      await check(`unix://${d.socket}`, d.socket, c, false);
      expect(await settledLeftovers(d.dir), c.what).to.deep.equal(NOTHING_LEFT);
      if (ref && !c.engineOnly) await check(ref.host, ref.socket, c, true);
    });
  }

  it("a failed RUN says the output it had before its error, with the exit code in errorDetail", async () => {
    const answer = await postBuild(d.socket, { body: await contextTar({ Dockerfile: "FROM busybox\nRUN echo out; echo err >&2; exit 5\n" }), query: { forcerm: "1" } });
    expect(answer.text).to.match(/ ---> Running in [0-9a-f]{12}\nout\n\u001b\[91merr\n\u001b\[0mRemoving intermediate container [0-9a-f]{12}\n$/);
    expect(answer.messages.at(-1)).to.deep.equal({
      errorDetail: { code: 5, message: "The command '/bin/sh -c echo out; echo err >&2; exit 5' returned a non-zero code: 5" },
      error: "The command '/bin/sh -c echo out; echo err >&2; exit 5' returned a non-zero code: 5",
    });
    expect(await containers(`unix://${d.socket}`)).to.deep.equal([]);
  });

  /** Polls (bounded) until `test` holds. */
  async function eventually(what: string, test: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
    const until = Date.now() + ms;
    for (let i = 0; i < 1000 && Date.now() < until; i++) {
      if (await test()) return;
      await sleep(100);
    }
    throw new Error(`not within ${ms} ms: ${what}`);
  }

  for (const daemon of ["engined", "dockerd"] as const) {
    it(`${daemon}: a client that goes away mid-RUN takes the RUN's container with it, and the build leaves nothing`, async function () {
      if (daemon === "dockerd" && !ref) this.skip();
      const [host, socket] = daemon === "engined" ? [`unix://${d.socket}`, d.socket] : [ref!.host, ref!.socket];
      const before = await images(host);
      const answer = await postBuild(socket, {
        body: await contextTar({ Dockerfile: "FROM busybox\nENV E=abort\nRUN echo started; sleep 60\n" }),
        abortWhen: (m) => m.stream === "started\n",
      });
      expect(answer.aborted).to.equal(true);
      await eventually("the RUN container removed", async () => (await containers(host)).length === 0).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${await cli(host, "ps", "-a", "--no-trunc")}`);
      });
      if (daemon === "engined") await eventually("nothing left", () => JSON.stringify(leftovers(d.dir)) === JSON.stringify(NOTHING_LEFT));
      // the ENV step's image stays, as the images of the steps done do
      expect([...(await images(host))].filter((id) => !before.has(id))).to.have.length(1);
    });
  }
});

describe("build errors: a daemon killed with SIGKILL mid-build", function () {
  this.timeout(300_000);
  let dir: string;
  let rootfs: string;
  const daemons: TestDaemon[] = [];
  const socket = () => join(dir, "engine.sock");
  const host = () => `unix://${socket()}`;
  const start = async () => {
    const d = await startEngined({ hosts: [host()], args: ["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "engine.pid")] });
    daemons.push(d);
    return d;
  };
  /** SIGKILL (again, harmlessly, when sent already) and the exit. */
  const kill = async (d: TestDaemon) => {
    const exited = new Promise((r) => (d.proc.exitCode !== null || d.proc.signalCode !== null ? r(null) : d.proc.once("exit", r)));
    d.proc.kill("SIGKILL");
    await exited;
  };

  before(async () => {
    rootfs = writeFixture(makeTempDir("engine-build-kill-"), "rootfs.tar", await busyboxRootfs());
  });
  beforeEach(async () => {
    dir = makeTempDir("engine-build-kill-");
    await start();
    expect((await docker(host(), ["import", "-c", 'CMD ["sh"]', rootfs, "busybox"])).code).to.equal(0);
  });
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop();
  });

  it("in a RUN: the context is removed at the next start, and the RUN's container stays listed, as Docker's does", async () => {
    const d = daemons[0];
    const answer = await postBuild(socket(), {
      body: await contextTar({ Dockerfile: "FROM busybox\nRUN echo started; sleep 60\n", f: "x" }),
      abortWhen: (m) => {
        if (m.stream === "started\n") d.proc.kill("SIGKILL");
        return m.stream === "started\n";
      },
    });
    expect(answer.aborted).to.equal(true);
    await kill(d);
    expect(leftovers(dir).tmpBuild, "the killed build's context").to.have.length(1);

    await start();
    expect(await settledLeftovers(dir)).to.deep.equal(NOTHING_LEFT);
    const ps = (await docker(host(), ["ps", "-a", "--no-trunc", "--format", "{{.Command}}|{{.Status}}"])).stdout.trim();
    expect(ps).to.match(/^"\/bin\/sh -c 'echo started; sleep 60'"\|Exited \(137\)/);
    expect((await docker(host(), ["rm", "-f", (await docker(host(), ["ps", "-aq"])).stdout.trim()])).code).to.equal(0);
  });

  it("in a COPY: its layer, the layer's mount and the context are removed at the next start", async () => {
    const d = daemons[0];
    const big = Buffer.alloc(96 * 1024 * 1024, 7);
    const pending = join(dir, "data", "builder", "pending");
    let caught: string[] = [];
    let settled = false;
    const building = postBuild(socket(), { body: await contextTar({ Dockerfile: "FROM busybox\nCOPY big /big\n", big }) })
      .catch(() => undefined)
      .finally(() => (settled = true));
    // the COPY's layer is noted in builder/pending from before it is made, then mounted under
    // exec/build while the files are written: kill once both are there
    const mounted = (id: string) => readFileSync("/proc/self/mountinfo", "utf8").includes(`${dir}/exec/build/${id} `);
    const until = Date.now() + 60_000;
    for (let i = 0; i < 60_000 && !settled && Date.now() < until; i++) {
      caught = existsSync(pending) ? readdirSync(pending) : [];
      if (caught.length === 1 && mounted(caught[0])) break;
      await sleep(1);
    }
    await kill(d);
    await building;
    expect(caught, "the build was killed while its COPY's layer was mounted").to.have.length(1);
    const layer = caught[0];
    expect(leftovers(dir).tmpBuild, "the killed build's context and tars").to.not.deep.equal([]);
    expect(leftovers(dir).mounts.filter((m) => m.endsWith(`/build/${layer}`)), "the layer's mount").to.have.length(1);

    await start();
    expect(await settledLeftovers(dir)).to.deep.equal(NOTHING_LEFT);
    expect(existsSync(join(dir, "data", "overlay2", layer)), "the layer's storage").to.equal(false);
    expect(readFileSync("/proc/self/mountinfo", "utf8")).to.not.include(layer);
  });
});
