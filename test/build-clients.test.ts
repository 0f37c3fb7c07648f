/**
 * `POST /build` driven by the clients that use the classic builder besides the Docker CLI:
 * python3-docker (`images.build` from a folder with a tag, build args, a target and `rm`; from a
 * file object; a failure; the low-level API quiet with labels), dockerode (`buildImage` with a
 * context folder and its `src` list, and with a tar stream, followed with
 * `modem.followProgress`), and Debian's docker-compose 1.29 bringing up a project whose
 * services are built (`build:` with context, dockerfile, args and target; one with `image:`,
 * one named by compose) and taking it down with its images. Each image runs and carries the
 * tags its client asked for. The daemon runs in a network namespace of its own with its
 * bridge (compose makes a network); nothing is pulled.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { join } from "node:path";
import { Readable } from "node:stream";
import { contextDir, contextTar } from "./helpers/build-api.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, runCommand, type RunResult } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

const STAGES = `FROM busybox AS base
ARG MSG=default
RUN echo "$MSG" > /msg
CMD ["cat", "/msg"]
FROM base AS final
RUN echo final > /msg
`;

const COMPOSE = `version: "3.8"
services:
  web:
    build:
      context: ./web
      dockerfile: Containerfile
      args:
        GREETING: hello from compose
      target: serve
    image: built/web:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]
  worker:
    build: ./worker
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]
`;

interface PythonBuilds {
  from_path: { tags: string[]; id: string; steps: string[]; run: string };
  from_fileobj: { tags: string[]; run: string };
  failure: { msg: string; before: boolean };
  low_level: { lines: { stream?: string }[]; labels: Record<string, string> };
}

describe("build clients: python3-docker, dockerode, docker-compose 1.29", function () {
  this.timeout(300_000);
  let n: NetDaemon;
  const run = (image: string) => n.cli("run", "--rm", "--network", "none", image);
  const tagsOf = async (image: string): Promise<string[]> => JSON.parse(await n.cli("image", "inspect", "--format", "{{json .RepoTags}}", image));

  before(async () => {
    n = await startNetDaemon();
  });
  after(async () => {
    await n?.stop();
  });

  it("python3-docker: images.build from a folder (tag, buildargs, target, rm) and from a file object; BuildError; the low-level API", async () => {
    const dir = contextDir({ Dockerfile: STAGES });
    const r = await runCommand("python3", [join(ROOT, "test/fixtures/python-docker-build.py"), n.d.socket, dir], { timeoutMs: 240_000 });
    expect(r.code, r.stderr).to.equal(0);
    const got = JSON.parse(r.stdout) as PythonBuilds;
    expect(got.from_path).to.deep.include({ tags: ["py-built:1"], run: "from python\n" });
    expect(got.from_path.steps).to.deep.equal(["Step 1/4 : FROM busybox AS base", "Step 2/4 : ARG MSG=default", "Step 3/4 : RUN echo \"$MSG\" > /msg", "Step 4/4 : CMD [\"cat\", \"/msg\"]"]);
    expect(await tagsOf("py-built:1")).to.deep.equal(["py-built:1"]);
    expect(got.from_fileobj).to.deep.equal({ tags: ["py-fileobj:latest"], run: "fileobj\n" });
    expect(got.failure).to.deep.equal({ msg: "The command '/bin/sh -c echo before; exit 3' returned a non-zero code: 3", before: true });
    expect(got.low_level.lines).to.have.length(1);
    expect(got.low_level.lines[0].stream).to.match(/^sha256:[0-9a-f]{64}\n$/);
    expect(got.low_level.labels).to.deep.equal({ from: "file", x: "y" });
    // rm and forcerm leave no container; the low-level build's rm=False keeps its LABEL steps'
    // containers (from=file, and the labels' own step), as Docker's classic builder does (compared with dockerd 20.10)
    const left = (await n.cli("ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Command}}")).trim().split("\n");
    expect(left.map((l) => l.replace(/^\S+ /, ""))).to.have.members(['"/bin/sh -c \'#(nop) \' \'LABEL from=file\'"', '"/bin/sh -c \'#(nop) \' \'LABEL x=y\'"']);
    await n.cli("rm", ...left.map((l) => l.split(" ")[0]));
  });

  it("dockerode: buildImage with a context folder and its src list, and with a tar stream, followed to the end", async () => {
    const client = new Docker({ socketPath: n.d.socket });
    const dir = contextDir({ Dockerfile: STAGES, "not-sent": "left out by src\n" });
    type Message = { stream?: string; error?: string; aux?: { ID: string } };
    const follow = (stream: NodeJS.ReadableStream) =>
      new Promise<Message[]>((resolve, reject) => client.modem.followProgress(stream, (err: Error | null, out: Message[]) => (err ? reject(err) : resolve(out))));

    const folder = await follow(await client.buildImage({ context: dir, src: ["Dockerfile"] }, { t: "node-built:1", buildargs: { MSG: "from node" } }));
    expect(folder.filter((m) => m.error)).to.deep.equal([]);
    expect(folder.map((m) => m.stream ?? "").join("")).to.match(/Successfully built [0-9a-f]{12}\nSuccessfully tagged node-built:1\n$/);
    expect(await run("node-built:1")).to.equal("final\n"); // no target: the last stage
    expect((await client.getImage("node-built:1").inspect()).RepoTags).to.deep.equal(["node-built:1"]);

    const tar = Readable.from([await contextTar({ Dockerfile: STAGES })]);
    const streamed = await follow(await client.buildImage(tar, { t: "node-tar", target: "base", buildargs: { MSG: "from a tar stream" } }));
    expect(streamed.find((m) => m.aux)?.aux?.ID).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(await run("node-tar")).to.equal("from a tar stream\n");

    const failed = await follow(await client.buildImage({ context: contextDir({ Dockerfile: "FROM busybox\nRUN exit 7\n" }), src: ["Dockerfile"] }, { forcerm: true }));
    expect(failed.at(-1)).to.deep.include({ error: "The command '/bin/sh -c exit 7' returned a non-zero code: 7" });
    expect(await n.cli("ps", "-aq")).to.equal("");
  });

  it("docker-compose: up builds the services (context, dockerfile, args, target), the images are tagged as compose names them, down takes them", async () => {
    const dir = makeTempDir("engine-build-compose-");
    const config = makeTempDir("engine-build-compose-config-");
    const files = contextDir({
      "docker-compose.yml": COMPOSE,
      "web/Containerfile": 'FROM busybox AS serve\nARG GREETING=none\nRUN echo "$GREETING" > /greeting\nFROM serve AS extra\nRUN echo never > /greeting\n',
      "worker/Dockerfile": "FROM busybox\nCOPY w /w\n",
      "worker/w": "worker file\n",
    });
    const compose = (...args: string[]): Promise<RunResult> =>
      runCommand("docker-compose", ["-p", "bp", "-f", join(files, "docker-compose.yml"), ...args], {
        cwd: dir,
        // compose builds through the Python SDK (not the CLI): the classic POST /build
        env: { DOCKER_HOST: n.host, DOCKER_CONFIG: config, COMPOSE_DOCKER_CLI_BUILD: "0", DOCKER_BUILDKIT: "0", DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined, COMPOSE_FILE: undefined, COMPOSE_PROJECT_NAME: undefined },
        timeoutMs: 240_000,
      });

    const up = await compose("up", "-d");
    expect(up.code, up.stdout + up.stderr).to.equal(0);
    expect(up.stderr).to.include("Building web");
    expect(up.stderr).to.include("Building worker");
    expect(await tagsOf("built/web:1")).to.deep.equal(["built/web:1"]);
    expect(await tagsOf("bp_worker")).to.deep.equal(["bp_worker:latest"]);
    expect(await n.cli("exec", "bp_web_1", "cat", "/greeting")).to.equal("hello from compose\n"); // the target stage, its arg
    expect(await n.cli("exec", "bp_worker_1", "cat", "/w")).to.equal("worker file\n");
    const ps = await compose("ps");
    expect(ps.stdout).to.match(/^bp_web_1 .* Up *$/m);
    expect(ps.stdout).to.match(/^bp_worker_1 .* Up *$/m);

    // built again from the cache: every step
    const build = await compose("build");
    expect(build.code, build.stderr).to.equal(0);
    expect(build.stdout + build.stderr).to.not.match(/Running in/);

    const down = await compose("down", "-v", "--rmi", "all");
    expect(down.code, down.stdout + down.stderr).to.equal(0);
    expect(await n.cli("ps", "-aq", "--filter", "label=com.docker.compose.project=bp")).to.equal("");
    for (const image of ["built/web:1", "bp_worker"]) expect((await docker(n.host, ["image", "inspect", image])).code, image).to.equal(1);
  });
});
