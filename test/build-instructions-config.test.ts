/**
 * The instructions that set the image's configuration and the build's variables, at their
 * edges, built by engined and by Docker's own daemon (dockerd 20.10, classic builder) and
 * compared: what the build prints, the image's config and its history. ARG before FROM used
 * in FROM, build args with defaults and overrides, the unused-args warning, the predefined
 * proxy args (in the history only when declared), ENV substitution (`ENV a=1 b=$a` sees the old
 * a), USER and WORKDIR for RUN; EXPOSE ranges, VOLUME in JSON form, STOPSIGNAL, HEALTHCHECK NONE,
 * the `--label` options (one LABEL step each); ONBUILD triggers in a child build; and `q=1`.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { contextDir, contextTar, postBuild, type BuildMessage } from "./helpers/build-api.js";
import { cliBuild, cliOk, historyShape, imageConfig, startBuildDaemons, streamShape, type BuildDaemon, type BuildDaemons } from "./helpers/build-daemons.js";

const ARGS = `ARG TAG=latest
ARG UNUSED_META
FROM busybox:\${TAG}
ARG TAG
ARG A=defA
ARG B
ARG HTTP_PROXY
ENV a=1
ENV a=2 b=$a c=\${A:-none}
RUN echo "tag=$TAG a=$A b=$B p=$HTTP_PROXY hp=$HTTPS_PROXY np=$no_proxy env=$a,$b,$c"
USER nobody
WORKDIR /tmp/work
RUN id -u; pwd; stat -c "%U %G %a" /tmp/work
USER root
CMD ["sh"]
`;
const BUILD_ARGS = ["B=given", "HTTP_PROXY=http://hp:2", "HTTPS_PROXY=http://proxy:1", "no_proxy=x", "UNUSED2=z"];

const CONFIG = `FROM busybox
EXPOSE 8000-8002/udp 80
VOLUME ["/v1", "/v 2"]
STOPSIGNAL SIGUSR1
HEALTHCHECK NONE
ENV PORT=9000
EXPOSE $PORT/tcp
LABEL "with space"="a b" plain=$PORT
`;

const PARENT = `FROM busybox
ONBUILD RUN echo triggered > /trig
ONBUILD ENV FROM_TRIGGER=1
`;

/** A message list with the IDs made alike. */
const messagesShape = (list: BuildMessage[]) => JSON.parse(JSON.stringify(list).replace(/[0-9a-f]{64}/g, "<ID>").replace(/\b[0-9a-f]{12}\b/g, "<id>"));

describe("build instructions: configuration, arguments, triggers, quiet", function () {
  this.timeout(300_000);
  let daemons: BuildDaemons;
  const each = () => [daemons.engined, daemons.dockerd].filter((d): d is BuildDaemon => d !== undefined);
  const build = async (d: BuildDaemon, args: string[]) => {
    const r = await cliBuild(d.host, args);
    expect(r.code, `${d.name}: docker build ${args.join(" ")}: ${r.stderr}${r.stdout}`).to.equal(0);
    return streamShape(r.stdout);
  };

  /** Builds `dir` tagged `image` on each daemon: what each printed, its history and its config, engined's first. */
  const buildEach = async (dir: string, image: string, args: string[]) => {
    const outputs: string[] = [];
    const histories: string[][] = [];
    const configs: Record<string, unknown>[] = [];
    for (const d of each()) {
      outputs.push(await build(d, ["-t", image, ...args, dir]));
      histories.push(await historyShape(d.host, image));
      configs.push(await imageConfig(d.host, image));
    }
    return { outputs, histories, configs };
  };

  before(async () => {
    daemons = await startBuildDaemons();
  });
  after(async () => {
    await daemons?.stop();
  });

  it("build args, ARG before FROM, proxies, ENV substitution, USER and WORKDIR: what dockerd prints and records", async () => {
    const { outputs, histories, configs } = await buildEach(contextDir({ Dockerfile: ARGS }), "args", BUILD_ARGS.flatMap((a) => ["--build-arg", a]));
    const [out, history, config] = [outputs[0], histories[0], configs[0]];
    expect(out).to.include("Step 3/15 : FROM busybox:${TAG}\n");
    expect(out).to.include("tag=latest a=defA b=given p=http://hp:2 hp=http://proxy:1 np=x env=2,1,defA\n");
    expect(out).to.match(/\n65534\n\/tmp\/work\nroot root 755\n/);
    expect(out).to.include("[Warning] One or more build-args [UNUSED2] were not consumed\n");
    // the proxies given are in the RUN's environment; only the declared one is in the history
    expect(history).to.include('|4 A=defA B=given HTTP_PROXY=http://hp:2 TAG=latest /bin/sh -c echo "tag=$TAG a=$A b=$B p=$HTTP_PROXY hp=$HTTPS_PROXY np=$no_proxy env=$a,$b,$c"|0B');
    expect(history).to.include("/bin/sh -c #(nop)  ENV a=2 b=1 c=defA|0B");
    expect(config).to.deep.include({ User: "root", WorkingDir: "/tmp/work", Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "a=2", "b=1", "c=defA"] });
    if (outputs.length < 2) return;
    expect(outputs[0]).to.equal(outputs[1]);
    expect(histories[0]).to.deep.equal(histories[1]);
    for (const key of ["User", "WorkingDir", "Env", "Cmd"]) expect(configs[0][key], key).to.deep.equal(configs[1][key]);
  });

  it("a build arg given for a meta ARG changes the FROM", async () => {
    await cliOk(daemons.engined.host, ["tag", "busybox", "busybox:other"]);
    const answer = await postBuild(daemons.engined.socket, { body: await contextTar({ Dockerfile: ARGS }), query: { buildargs: JSON.stringify({ TAG: "other" }) } });
    expect(answer.error, answer.text).to.equal(undefined);
    expect(answer.text).to.include("Step 3/15 : FROM busybox:${TAG}\n");
    expect(answer.text).to.include("tag=other ");
  });

  it("EXPOSE ranges, VOLUME in JSON form, STOPSIGNAL, HEALTHCHECK NONE, LABEL and the --label options: dockerd's config and history", async () => {
    const { outputs, histories, configs } = await buildEach(contextDir({ Dockerfile: CONFIG }), "config", ["--label", "x=$PORT", "--label", "a=b c"]);
    // one LABEL step per option, sorted, as given (not substituted)
    expect(outputs[0]).to.match(/Step 9\/10 : LABEL a=b c\n ---> <id>\nStep 10\/10 : LABEL x=\$PORT\n ---> <id>\nSuccessfully built <id>\n/);
    expect(histories[0].slice(0, 4)).to.deep.equal([
      "/bin/sh -c #(nop)  LABEL x=$PORT|0B",
      "/bin/sh -c #(nop)  LABEL a=b c|0B",
      "/bin/sh -c #(nop)  LABEL with space=a b plain=9000|0B",
      "/bin/sh -c #(nop)  EXPOSE 9000/tcp|0B",
    ]);
    expect(histories[0]).to.include("/bin/sh -c #(nop)  EXPOSE 80 8000-8002/udp|0B");
    expect(configs[0]).to.deep.include({
      ExposedPorts: { "80/tcp": {}, "8000/udp": {}, "8001/udp": {}, "8002/udp": {}, "9000/tcp": {} },
      Volumes: { "/v1": {}, "/v 2": {} },
      StopSignal: "SIGUSR1",
      Healthcheck: { Test: ["NONE"] },
      Labels: { "with space": "a b", plain: "9000", x: "$PORT", a: "b c" },
    });
    if (outputs.length < 2) return;
    expect(outputs[0]).to.equal(outputs[1]);
    expect(histories[0]).to.deep.equal(histories[1]);
    for (const key of ["ExposedPorts", "Volumes", "StopSignal", "Healthcheck", "Labels"]) expect(configs[0][key], key).to.deep.equal(configs[1][key]);
  });

  it("a child build runs its base's ONBUILD triggers after FROM, printing one image ID after them, cached the second time", async () => {
    const parent = contextDir({ Dockerfile: PARENT });
    const child = contextDir({ Dockerfile: "FROM parent\nRUN cat /trig; echo $FROM_TRIGGER\n" });
    const runs: string[][] = [];
    for (const d of each()) {
      await build(d, ["-t", "parent", parent]);
      runs.push([await build(d, ["-t", "child", child]), await build(d, ["-t", "child", child])]);
      const config = await imageConfig(d.host, "child");
      // (the newest CLI asks engined for an API version whose inspect leaves empty fields out)
      expect([config.OnBuild ?? null, config.Env], d.name).to.deep.equal([null, ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "FROM_TRIGGER=1"]]);
      expect((await historyShape(d.host, "child")).slice(0, 3), d.name).to.deep.equal([
        "/bin/sh -c cat /trig; echo $FROM_TRIGGER|0B",
        "/bin/sh -c #(nop)  ENV FROM_TRIGGER=1|0B",
        "/bin/sh -c echo triggered > /trig|+",
      ]);
    }
    const [first, cached] = runs[0];
    // (the triggers' containers printed nothing: their lines are left out as dockerd's nop steps' are)
    expect(first).to.match(/^Step 1\/2 : FROM parent\n# Executing 2 build triggers\n ---> <id>\nStep 2\/2 : RUN cat \/trig; echo \$FROM_TRIGGER\n ---> Running in <id>\ntriggered\n1\n/);
    expect(cached).to.match(/^Step 1\/2 : FROM parent\n# Executing 2 build triggers\n ---> Using cache\n ---> Using cache\n ---> <id>\nStep 2\/2 : RUN cat \/trig; echo \$FROM_TRIGGER\n ---> Using cache\n ---> <id>\n/);
    if (runs.length > 1) expect(runs[0]).to.deep.equal(runs[1]);
  });

  it("q=1: a good build says only its image ID; a failed one everything it kept, then its error", async () => {
    const good = await contextTar({ Dockerfile: "FROM busybox\nRUN echo quiet-good\n" });
    // (stdout and stderr are two pipes: a moment between them keeps their order for sure)
    const bad = await contextTar({ Dockerfile: "FROM busybox\nRUN echo out; sleep 0.2; echo err >&2\nRUN exit 2\n" });
    const answers: { good: BuildMessage[]; bad: BuildMessage[] }[] = [];
    for (const d of each()) {
      const g = await postBuild(d.socket, { body: good, query: { q: "1", labels: JSON.stringify({ a: "b" }) } });
      const b = await postBuild(d.socket, { body: bad, query: { q: "1", forcerm: "1" } });
      answers.push({ good: g.messages, bad: b.messages });
    }
    const mine = answers[0];
    expect(mine.good).to.have.length(1);
    expect(mine.good[0].stream).to.match(/^sha256:[0-9a-f]{64}\n$/);
    expect(messagesShape(mine.bad)).to.deep.equal([
      { stream: "Step 1/3 : FROM busybox" },
      { stream: "\n" },
      { stream: " ---> <id>\n" },
      { stream: "Step 2/3 : RUN echo out; sleep 0.2; echo err >&2" },
      { stream: "\n" },
      { stream: " ---> Running in <id>\n" },
      { stream: "out\n" },
      { stream: "\u001b[91merr\n\u001b[0m" },
      { stream: "Removing intermediate container <id>\n" },
      { stream: " ---> <id>\n" },
      { stream: "Step 3/3 : RUN exit 2" },
      { stream: "\n" },
      { stream: " ---> Running in <id>\n" },
      { stream: "Removing intermediate container <id>\n" },
      { errorDetail: { code: 2, message: "The command '/bin/sh -c exit 2' returned a non-zero code: 2" }, error: "The command '/bin/sh -c exit 2' returned a non-zero code: 2" },
    ]);
    if (answers.length < 2) return;
    expect(messagesShape(answers[0].good)).to.deep.equal(messagesShape(answers[1].good));
    expect(messagesShape(answers[0].bad)).to.deep.equal(messagesShape(answers[1].bad));
  });
});
