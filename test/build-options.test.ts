/**
 * The options of `POST /build` that reach outside the Dockerfile: `pull=1` of a base image from
 * a registry on loopback (Debian's docker-registry), `X-Registry-Config` credentials for a base
 * image in a registry with authentication; the RUN containers' settings (`networkmode=none`,
 * `extrahosts`, `memory`, `shmsize`), seen from inside a RUN and compared with what Docker's
 * daemon (dockerd 20.10) shows there; and `remote=`: a git repository (a bare repository served
 * over git's dumb HTTP protocol on loopback, `#ref:subdir`), a tarball and a lone Dockerfile
 * from a URL.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { serveStatic } from "./fixtures/build-context-git.js";
import { contextDir, contextTar, NOTHING_LEFT, settledLeftovers, postBuild, serveOnLoopback } from "./helpers/build-api.js";
import { cliBuild, cliOk, startBuildDaemons, streamShape, type BuildDaemon, type BuildDaemons } from "./helpers/build-daemons.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { DEFAULT_USERS, startRegistry, type TestRegistry } from "./helpers/registry.js";

/** A bare repository `repo.git` in `dir`, its `main` holding `app/Dockerfile` and `app/f`, ready for git's dumb HTTP protocol. */
function gitRepository(dir: string): void {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };
  const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "init.defaultBranch=main", ...args], { cwd, env, stdio: "pipe" });
  const work = join(dir, "work");
  mkdirSync(join(work, "app"), { recursive: true });
  writeFileSync(join(work, "app", "Dockerfile"), "FROM busybox\nCOPY f /from-git\nCMD cat /from-git\n");
  writeFileSync(join(work, "app", "f"), "cloned\n");
  writeFileSync(join(work, "top"), "not in the subdir\n");
  git(work, "init", "-q");
  git(work, "add", "-A");
  git(work, "commit", "-qm", "one");
  git(dir, "clone", "-q", "--bare", work, join(dir, "served", "repo.git"));
  git(join(dir, "served", "repo.git"), "update-server-info");
}

describe("build options: base image pulls, credentials, the RUN containers' settings, remote contexts", function () {
  this.timeout(300_000);
  let daemons: BuildDaemons;
  let engined: BuildDaemon;
  const registries: TestRegistry[] = [];
  const run = (image: string) => cliOk(engined.host, ["run", "--rm", "--network", "none", image]);

  before(async () => {
    daemons = await startBuildDaemons();
    engined = daemons.engined;
  });
  after(async () => {
    for (const r of registries.splice(0)) await r.stop();
    await daemons?.stop();
  });

  it("pull=1 pulls the base image from the registry even when it is here, and the image runs", async () => {
    const reg = await startRegistry();
    registries.push(reg);
    const base = `${reg.host}/base/bb:1`;
    await cliOk(engined.host, ["tag", "busybox", base]);
    await cliOk(engined.host, ["push", base]);
    await cliOk(engined.host, ["rmi", base]);
    const body = await contextTar({ Dockerfile: `FROM ${base}\nRUN echo pulled > /p\nCMD cat /p\n` });

    const missing = await postBuild(engined.socket, { body, query: { t: "pulled" } });
    expect(missing.error, missing.text).to.equal(undefined);
    expect(missing.messages.map((m) => m.status).filter(Boolean)).to.include.members(["Pulling from base/bb", `Status: Downloaded newer image for ${base}`]);
    expect(await run("pulled")).to.equal("pulled\n");

    // here now: without pull it is taken as it is, with pull=1 the registry is asked again
    const local = await postBuild(engined.socket, { body });
    expect(local.messages.filter((m) => m.status)).to.deep.equal([]);
    const again = await postBuild(engined.socket, { body, query: { pull: "1" } });
    expect(again.messages.map((m) => m.status).filter(Boolean)).to.include.members(["Pulling from base/bb", `Status: Image is up to date for ${base}`]);
    expect(again.text).to.match(/Step 2\/3 : RUN echo pulled > \/p\n ---> Using cache\n/);
  });

  it("takes a base image's credentials from X-Registry-Config, and fails without them", async () => {
    const reg = await startRegistry({ auth: "htpasswd" });
    registries.push(reg);
    const [{ username, password }] = DEFAULT_USERS;
    const base = `${reg.host}/private/bb:1`;
    const config = makeTempDir("engine-build-docker-config-");
    const withConfig = { DOCKER_CONFIG: config };
    expect((await docker(engined.host, ["login", "-u", username, "--password-stdin", reg.host], withConfig, { input: `${password}\n` })).code).to.equal(0);
    await cliOk(engined.host, ["tag", "busybox", base]);
    expect((await docker(engined.host, ["push", base], withConfig, { timeoutMs: 60_000 })).code).to.equal(0);
    await cliOk(engined.host, ["rmi", base]);
    const body = await contextTar({ Dockerfile: `FROM ${base}\nCMD echo private\n` });

    const anonymous = await postBuild(engined.socket, { body });
    expect(anonymous.error).to.match(/no basic auth credentials|unauthorized|authentication required/);
    const header = (auth: Record<string, unknown>) => ({ "X-Registry-Config": Buffer.from(JSON.stringify(auth)).toString("base64") });
    const wrong = await postBuild(engined.socket, { body, headers: header({ [reg.host]: { username, password: "wrong" } }) });
    expect(wrong.error).to.match(/unauthorized|authentication required/);
    const right = await postBuild(engined.socket, { body, headers: header({ [reg.host]: { username, password } }), query: { t: "private" } });
    expect(right.error, right.text).to.equal(undefined);
    expect(right.messages.map((m) => m.status)).to.include(`Status: Downloaded newer image for ${base}`);
    expect(await run("private")).to.equal("private\n");

    // the Docker CLI sends the credentials of its config.json itself
    await cliOk(engined.host, ["rmi", base, "private"]);
    const dir = contextDir({ Dockerfile: `FROM ${base}\nCMD echo from-the-cli\n` });
    const cli = await docker(engined.host, ["build", "-t", "private-cli", dir], { ...withConfig, DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000 });
    expect(cli.code, cli.stderr).to.equal(0);
    expect(await run("private-cli")).to.equal("from-the-cli\n");
    expect(await settledLeftovers(engined.dir!)).to.deep.equal(NOTHING_LEFT);
  });

  it("runs RUN with the build's network mode, extra hosts, memory and shm size, as dockerd does", async () => {
    const dir = contextDir({
      Dockerfile: "FROM busybox\nRUN grep -v '^fe\\|^ff\\|^::1' /etc/hosts; ip -o link | cut -d: -f2; cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; df -k /dev/shm | tail -1\n",
    });
    const args = ["--no-cache", "--network", "none", "--add-host", "h1:10.1.2.3", "--add-host", "h2:10.4.5.6", "-m", "64m", "--shm-size", "32m", dir];
    const outputs: string[] = [];
    for (const d of [engined, daemons.dockerd].filter((x): x is BuildDaemon => x !== undefined)) {
      const r = await cliBuild(d.host, args);
      expect(r.code, `${d.name}: ${r.stderr}`).to.equal(0);
      outputs.push(streamShape(r.stdout));
    }
    expect(outputs[0]).to.include("127.0.0.1\tlocalhost\n10.1.2.3\th1\n10.4.5.6\th2\n lo\n67108864\nshm                      32768         0     32768   0% /dev/shm\n");
    if (outputs.length > 1) expect(outputs[0]).to.equal(outputs[1]);
  });

  describe("remote contexts (a server on loopback)", () => {
    let server: { base: string; close(): void };
    before(async () => {
      const dir = makeTempDir("engine-build-remote-");
      gitRepository(dir);
      const tgz = gzipSync(await contextTar({ Dockerfile: "FROM busybox\nCOPY f /from-tar\nCMD cat /from-tar\n", f: "unpacked\n" }));
      server = await serveOnLoopback((req, res) => {
        if (req.url === "/ctx.tar.gz") return res.writeHead(200, { "content-type": "application/gzip" }).end(tgz);
        if (req.url === "/Dockerfile") return res.writeHead(200, { "content-type": "text/plain" }).end("FROM busybox\nCMD echo lone dockerfile\n");
        serveStatic(join(dir, "served"), req, res);
      });
    });
    after(() => server?.close());

    it("builds a git repository's ref and subdir, a tarball and a lone Dockerfile", async () => {
      const cases: [string, string, string][] = [
        [`${server.base}/repo.git#main:app`, "from-git", "cloned\n"],
        [`${server.base}/ctx.tar.gz`, "from-tar", "unpacked\n"],
        [`${server.base}/Dockerfile`, "from-url", "lone dockerfile\n"],
      ];
      for (const [remote, tag, says] of cases) {
        const answer = await postBuild(engined.socket, { query: { remote, t: tag } });
        expect(answer.error, `${remote}: ${answer.body}`).to.equal(undefined);
        expect(answer.status).to.equal(200);
        expect(await run(tag), remote).to.equal(says);
      }
      const missing = await postBuild(engined.socket, { query: { remote: `${server.base}/repo.git#nope` } });
      expect(missing.status).to.equal(400);
      expect(JSON.parse(missing.body).message).to.match(new RegExp(`^error fetching nope from ${server.base}/repo.git: .*couldn't find remote ref nope`, "s"));
      expect(await settledLeftovers(engined.dir!)).to.deep.equal(NOTHING_LEFT);
    });
  });
});
