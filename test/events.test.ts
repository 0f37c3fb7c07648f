/**
 * `GET /events` against a real engined: the Docker CLI's `docker events` over a window of time
 * shows a run's events in Docker's order, filters narrow them, a follower sees events as they
 * happen, and a reload is a daemon event.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { request } from "node:http";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, sighup, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const nowSeconds = () => (Date.now() / 1000).toFixed(9);

describe("events", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let host: string;
  let configFile: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    const work = makeTempDir("engine-events-");
    configFile = join(work, "daemon.json");
    writeFileSync(configFile, JSON.stringify({ labels: ["a=1"] }));
    d = await startEngined({ args: ["--config-file", configFile] });
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => d?.stop());

  it("docker events shows a run's events in order, with Docker's attributes", async () => {
    const since = nowSeconds();
    expect((await docker(host, ["run", "--rm", "--name", "evented", "--label", "team=blue", "busybox", "sh", "-c", "exit 3"])).code).to.equal(3);
    const until = nowSeconds();
    const r = await docker(host, ["events", "--since", since, "--until", until, "--filter", "type=container", "--format", "{{.Action}} {{.Actor.Attributes.name}} {{.Actor.Attributes.exitCode}}"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim().split("\n")).to.deep.equal(["create evented <no value>", "attach evented <no value>", "start evented <no value>", "die evented 3", "destroy evented <no value>"]);
    const json = await docker(host, ["events", "--since", since, "--until", until, "--filter", "event=die", "--format", "{{json .}}"]);
    const die = JSON.parse(json.stdout);
    expect(die).to.include({ Type: "container", Action: "die", status: "die", from: "busybox", scope: "local" });
    expect(die.Actor.Attributes).to.include({ image: "busybox", name: "evented", exitCode: "3", team: "blue" });
    expect(die.id).to.equal(die.Actor.ID);
    expect(String(die.timeNano)).to.match(/^\d{19}$/);
    expect(Math.floor(die.timeNano / 1e9)).to.equal(die.time);
  });

  it("a start connects the networks before it mounts the volumes, as Docker's start sets them up", async () => {
    ok(await docker(host, ["volume", "create", "ordered"]), "volume create");
    const since = nowSeconds();
    ok(await docker(host, ["run", "--rm", "--network", "none", "-v", "ordered:/data", "busybox", "true"]), "run");
    const until = nowSeconds();
    const r = await docker(host, ["events", "--since", since, "--until", until, "--filter", "event=connect", "--filter", "event=mount", "--filter", "event=start", "--format", "{{.Type}} {{.Action}}"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim().split("\n")).to.deep.equal(["network connect", "volume mount", "container start"]);
    ok(await docker(host, ["volume", "rm", "ordered"]), "volume rm");
  });

  it("logs one prune event for each prune, with what it reclaimed, as Docker's daemon does (compared with dockerd 20.10)", async () => {
    const since = nowSeconds();
    for (const what of ["container", "network", "volume", "image", "builder"]) ok(await docker(host, [what, "prune", "-f"]), `${what} prune`);
    const until = nowSeconds();
    const r = await docker(host, ["events", "--since", since, "--until", until, "--filter", "event=prune", "--format", "{{.Type}} {{.Action}} {{json .Actor.Attributes}}"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim().split("\n")).to.deep.equal([
      'container prune {"reclaimed":"0"}',
      'network prune {"reclaimed":"0"}',
      'volume prune {"reclaimed":"0"}',
      'image prune {"reclaimed":"0"}',
      'builder prune {"reclaimed":"0"}',
    ]);
  });

  it("logs a delete for each image a removal takes, a build's intermediate images too, as Docker's daemon does (compared with dockerd 20.10)", async () => {
    const context = makeTempDir("engine-events-build-");
    writeFileSync(join(context, "Dockerfile"), "FROM busybox\nENV A=1\nRUN echo hi > /f\nLABEL x=y\n");
    ok(await docker(host, ["build", "-q", "-t", "layered:1", context], { DOCKER_BUILDKIT: "0" }), "build");
    const since = nowSeconds();
    const removed = ok(await docker(host, ["rmi", "layered:1"]), "rmi");
    const until = nowSeconds();
    // the three images the build made (ENV, RUN, LABEL), each Deleted line of an image has its event; the layers' have none
    const r = await docker(host, ["events", "--since", since, "--until", until, "--filter", "type=image", "--format", "{{.Action}} {{.Actor.ID}}"]);
    const deletes = r.stdout.trim().split("\n").filter((l) => l.startsWith("delete "));
    expect(deletes).to.have.length(3);
    for (const line of deletes) expect(removed).to.include(`Deleted: ${line.slice("delete ".length)}`);
  });

  it("tells a build step's image create from API 1.46 only, and gives image events their older status and id as Docker up to API 1.51", async () => {
    const context = makeTempDir("engine-events-create-");
    writeFileSync(join(context, "Dockerfile"), "FROM busybox\nLABEL made=now\n");
    const since = nowSeconds();
    ok(await docker(host, ["build", "-q", "--no-cache", "-t", "made:1", context], { DOCKER_BUILDKIT: "0" }), "build");
    const until = nowSeconds();
    const events = async (version: string) => {
      const r = await httpRequest({ socketPath: d.socket }, "GET", `/v${version}/events?since=${since}&until=${until}&filters=${encodeURIComponent('{"type":["image"]}')}`);
      return r.body.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    };
    expect((await events("1.46")).map((e) => e.Action)).to.deep.equal(["create", "tag"]);
    const old = await events("1.45");
    expect(old.map((e) => e.Action)).to.deep.equal(["tag"]);
    expect(old[0]).to.include({ status: "tag", id: old[0].Actor.ID });
    expect(old[0]).to.not.have.property("from");
  });

  it("filters by container name, label and action, refuses a bad time, and takes an unknown filter key as Docker's daemon does", async () => {
    const since = nowSeconds();
    const id = ok(await docker(host, ["create", "--name", "first-one", "--label", "keep=yes", "busybox", "true"]), "create").trim();
    ok(await docker(host, ["create", "--name", "second-one", "busybox", "true"]), "create");
    ok(await docker(host, ["rm", "first-one", "second-one"]), "rm");
    const until = nowSeconds();
    const events = async (...filters: string[]) =>
      (await docker(host, ["events", "--since", since, "--until", until, ...filters.flatMap((f) => ["--filter", f]), "--format", "{{.Action}} {{.Actor.Attributes.name}}"])).stdout.trim().split("\n");
    expect(await events("container=first-one")).to.deep.equal(["create first-one", "destroy first-one"]);
    expect(await events(`container=${id.slice(0, 12)}`)).to.deep.equal(["create first-one", "destroy first-one"]);
    expect(await events("label=keep=yes", "event=destroy")).to.deep.equal(["destroy first-one"]);
    expect(await events("event=create")).to.deep.equal(["create first-one", "create second-one"]);
    const bad = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/events?since=yesterday");
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.body).message).to.equal('invalid value for since: "yesterday"');
    // Docker's router checks no key of an events filter: one no event has selects nothing more
    const otherKey = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/events?since=${since}&until=${until}&filters=${encodeURIComponent('{"colour":["red"]}')}`);
    expect(otherKey.status).to.equal(200);
    expect(otherKey.body.split("\n").filter(Boolean).length).to.be.greaterThan(0);
    const backwards = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/events?since=1700000100&until=1700000000");
    expect(backwards.status).to.equal(400);
    expect(JSON.parse(backwards.body).message).to.equal("`since` time (1700000100) cannot be after `until` time (1700000000)");
  });

  it("streams events to a follower as they happen, and a reload is a daemon event", async () => {
    const lines: string[] = [];
    const req = request({ socketPath: d.socket, path: `/v1.51/events?filters=${encodeURIComponent('{"type":["container","daemon"]}')}` });
    const headers = new Promise<number>((resolve, reject) => {
      req.on("response", (res) => {
        res.setEncoding("utf8");
        let buf = "";
        res.on("data", (chunk: string) => {
          buf += chunk;
          for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
            lines.push(buf.slice(0, nl));
            buf = buf.slice(nl + 1);
          }
        });
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
    });
    req.end();
    try {
      expect(await headers).to.equal(200); // the headers come before any event
      ok(await docker(host, ["create", "--name", "followed", "busybox", "true"]), "create");
      writeFileSync(configFile, JSON.stringify({ labels: ["a=2"] }));
      await sighup(d);
      const until = Date.now() + 5000;
      while (lines.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
      const seen = lines.map((l) => JSON.parse(l) as { Type: string; Action: string; Actor: { Attributes: Record<string, string> } });
      expect(seen.map((e) => `${e.Type} ${e.Action}`)).to.deep.equal(["container create", "daemon reload"]);
      expect(seen[0].Actor.Attributes.name).to.equal("followed");
    } finally {
      req.destroy();
      await docker(host, ["rm", "-f", "followed"]);
    }
  });
});
