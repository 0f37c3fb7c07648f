/**
 * Legacy container links (`docker run --link db:alias`), end to end against a real engined with
 * its bridge in a namespace of its own, through the Docker CLI and the API: create's checks, the
 * environment variables and /etc/hosts lines at start, inspect's `HostConfig.Links`, the list's
 * `Names`, `docker rm --link`, renames, a child started again, a child removed, links on a
 * user-defined network (the endpoint's, resolved by the network's DNS for the linking container
 * alone), and links across a daemon restart. The text itself (core/containers/links.ts) first.
 *
 * Checked against dockerd 20.10 in its own network namespace: every message and status of
 * create (400s), of `rm --link` (404s; Docker's 500 for a container's own name is a 409 here), of
 * a start with a stopped, removed or off-network child (Docker's 500s are 409s here; a bad
 * endpoint link's 500 is a 400); inspect's
 * `/db:/web/alias`; the list's sorted names; the hosts lines (after ExtraHosts, before the
 * container's own; the name only when the alias differs) and their update when a child starts
 * again; the variables' place (after PATH, HOSTNAME, TERM; the container's Env replaces them);
 * the rename and removal behaviours; a user-defined network's endpoint `Links`. The port
 * variables follow Docker 28's order and ranges (moby daemon/links/links.go since 2025): 20.10
 * sorted ports by number alone (its `DB_PORT` could be a UDP port), counted a run only from 3
 * ports and wrote a run's variables first. After a daemon restart the links are resolved again
 * by the names HostConfig.Links gives, as Docker's restore does (a link removed with `rm --link`
 * is back, a renamed child's is gone), checked against dockerd 20.10 too.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { parseLink, linkEnv, linkHostNames, withLinkAddress, withoutLinkLines } from "../core/containers/links.js";
import { EngineError } from "../core/errors.js";
import { dockerChecks } from "./helpers/docker-cli.js";
import { engine } from "./helpers/engine-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { makeNetns, startNetDaemon, type NetDaemon, type Netns } from "./helpers/net-daemon.js";

describe("legacy links: the text (core/containers/links.ts)", () => {
  it("reads entries as Docker's ParseLink does, with its messages", () => {
    expect(parseLink("db:alias")).to.deep.equal({ name: "db", alias: "alias" });
    expect(parseLink("db")).to.deep.equal({ name: "db", alias: "db" });
    expect(parseLink("/db:/web/alias")).to.deep.equal({ name: "db", alias: "alias" });
    expect(parseLink("db:")).to.deep.equal({ name: "db", alias: "" });
    for (const [entry, message] of [["", "empty string specified for links"], ["a:b:c", "bad format for links: a:b:c"]]) {
      expect(() => parseLink(entry)).to.throw(EngineError, message).with.property("statusCode", 400);
    }
  });

  it("makes the variables of moby's links tests: one port, and a range of three", () => {
    expect(linkEnv({ name: "/db/docker", childIp: "172.0.17.2", childEnv: ["PASSWORD=gordon"], exposedPorts: ["6379/tcp"] })).to.deep.equal([
      "DOCKER_PORT=tcp://172.0.17.2:6379",
      "DOCKER_PORT_6379_TCP=tcp://172.0.17.2:6379",
      "DOCKER_PORT_6379_TCP_ADDR=172.0.17.2",
      "DOCKER_PORT_6379_TCP_PORT=6379",
      "DOCKER_PORT_6379_TCP_PROTO=tcp",
      "DOCKER_NAME=/db/docker",
      "DOCKER_ENV_PASSWORD=gordon",
    ]);
    const range = linkEnv({ name: "/db/docker-1", childIp: "172.0.17.2", childEnv: [], exposedPorts: ["6381/tcp", "6379/tcp", "6380/tcp"] });
    expect(range.slice(-5)).to.deep.equal([
      "DOCKER_1_PORT_6379_TCP_START=tcp://172.0.17.2:6379",
      "DOCKER_1_PORT_6379_TCP_PORT_START=6379",
      "DOCKER_1_PORT_6379_TCP_END=tcp://172.0.17.2:6381",
      "DOCKER_1_PORT_6379_TCP_PORT_END=6381",
      "DOCKER_1_NAME=/db/docker-1",
    ]);
    expect(range.filter((e) => /_PORT_638[01]_TCP_ADDR=/.test(e))).to.have.length(2);
  });

  it("puts TCP first, ends a run at another protocol, and leaves out HOME, PATH and bare names", () => {
    const env = linkEnv({ name: "/w/a", childIp: "10.0.0.2", childEnv: ["HOME=/x", "PATH=/bin", "BARE", "K=a=b"], exposedPorts: ["53/udp", "7001/tcp", "7000/tcp", "7002/udp"] });
    const per = (n: number, p: string) => [`A_PORT_${n}_${p.toUpperCase()}=${p}://10.0.0.2:${n}`, `A_PORT_${n}_${p.toUpperCase()}_ADDR=10.0.0.2`, `A_PORT_${n}_${p.toUpperCase()}_PORT=${n}`, `A_PORT_${n}_${p.toUpperCase()}_PROTO=${p}`];
    expect(env).to.deep.equal([
      "A_PORT=tcp://10.0.0.2:7000",
      ...per(7000, "tcp"),
      ...per(7001, "tcp"),
      ...per(53, "udp"),
      "A_PORT_7000_TCP_START=tcp://10.0.0.2:7000",
      "A_PORT_7000_TCP_PORT_START=7000",
      "A_PORT_7000_TCP_END=tcp://10.0.0.2:7001",
      "A_PORT_7000_TCP_PORT_END=7001",
      ...per(7002, "udp"),
      "A_NAME=/w/a",
      "A_ENV_K=a=b",
    ]);
    expect(linkEnv({ name: "/w/my-db", childIp: "10.0.0.2", childEnv: [], exposedPorts: [] })).to.deep.equal(["MY_DB_NAME=/w/my-db"]);
  });

  it("names a hosts line, moves it to a new address and takes it out as Docker does", () => {
    expect(linkHostNames("db", "0123456789ab", "/db")).to.equal("db 0123456789ab");
    expect(linkHostNames("al", "0123456789ab", "/db")).to.equal("al 0123456789ab db");
    const hosts = "127.0.0.1\tlocalhost\n10.0.0.2\tal 0123456789ab db\n10.0.0.2\talpha x\n10.0.0.3\tme\n";
    expect(withLinkAddress(hosts, "al", "10.0.0.9")).to.equal("127.0.0.1\tlocalhost\n10.0.0.9\tal 0123456789ab db\n10.0.0.2\talpha x\n10.0.0.3\tme\n");
    expect(withoutLinkLines(hosts, "al 0123456789ab db")).to.equal("127.0.0.1\tlocalhost\n10.0.0.2\talpha x\n10.0.0.3\tme\n");
  });
});

describe("legacy links (Docker CLI and the API, against engined)", function () {
  this.timeout(240_000);
  let ns: Netns;
  let roots: string;
  let n: NetDaemon;
  const { run, ok, fails } = dockerChecks(() => n.host);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await httpRequest({ socketPath: n.d.socket }, method, `/v1.41${path}`, body);
    return { status: res.status, body: res.body ? (JSON.parse(res.body) as Record<string, unknown>) : {} };
  };
  const inspect = async (ref: string, format: string) => (await ok("inspect", "--format", format, ref)).trim();
  const names = async () => {
    const list = (await api("GET", "/containers/json?all=1")).body as unknown as { Names: string[] }[];
    return list.map((c) => c.Names).sort((a, b) => a[0].localeCompare(b[0]));
  };
  /** A container's process environment, in its order. */
  const environ = async (ref: string) => (await ok("exec", ref, "cat", "/proc/1/environ")).split("\0").filter(Boolean);
  const hostsTail = async (ref: string, lines: number) => (await ok("exec", ref, "cat", "/etc/hosts")).trim().split("\n").slice(-lines);
  const shortId = async (ref: string) => (await inspect(ref, "{{.Id}}")).slice(0, 12);
  const ipOf = async (ref: string) => inspect(ref, "{{.NetworkSettings.IPAddress}}");

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    ns = makeNetns();
    roots = makeTempDir("engine-links-");
    n = await startNetDaemon(["--shutdown-timeout", "1"], { netns: ns, roots });
  });
  afterEach(async function () {
    if (!n) return;
    const ids = (await ok("ps", "-aq")).split("\n").filter(Boolean);
    if (ids.length) await run("rm", "-f", ...ids);
    await run("network", "rm", "links-net");
  });
  after(async function () {
    await n?.stop();
    ns?.remove();
  });

  it("refuses at create what Docker refuses, with its messages (400)", async function () {
    await ok("run", "-d", "--name", "db", "busybox", "sleep", "300");
    await ok("run", "-d", "--name", "hostc", "--net", "host", "busybox", "sleep", "300");
    expect(await fails("run", "--rm", "--link", "nothere:x", "busybox", "true")).to.include("could not get container for nothere: No such container: nothere");
    const cases: [Record<string, unknown>, string][] = [
      [{ Links: ["nothere:x"] }, "could not get container for nothere: No such container: nothere"],
      [{ Links: ["db:x:y"] }, "bad format for links: db:x:y"],
      [{ Links: [""] }, "empty string specified for links"],
      [{ Links: [":x"] }, 'could not get container for : invalid name or ID supplied: ""'],
      [{ NetworkMode: "host", Links: ["db:x"] }, "conflicting options: host type networking can't be used with links. This would result in undefined behavior"],
      [{ NetworkMode: "container:db", Links: ["db:x"] }, "conflicting options: container type network can't be used with links. This would result in undefined behavior"],
      [{ Links: ["hostc:x"] }, "conflicting options: host type networking can't be used with links. This would result in undefined behavior"],
    ];
    for (const [hostConfig, message] of cases) {
      const res = await api("POST", "/containers/create", { Image: "busybox", HostConfig: hostConfig });
      expect(res, JSON.stringify(hostConfig)).to.deep.equal({ status: 400, body: { message } });
    }
    expect(await names()).to.deep.equal([["/db"], ["/hostc"]]);
  });

  it("gives the parent the variables and hosts lines of each link, and shows the links in inspect and the list", async function () {
    // made through the API: the Docker CLI does not keep the order of several -e
    const created = await api("POST", "/containers/create?name=db", {
      Image: "busybox", Cmd: ["sleep", "300"], Env: ["FOO=bar", "HOME=/x"], ExposedPorts: { "5432/tcp": {}, "7000/tcp": {}, "7001/tcp": {}, "53/udp": {} },
    });
    expect(created.status).to.equal(201);
    await ok("start", "db");
    await ok("run", "-d", "--name", "web", "--link", "db:my-db", "--link", "db", "--add-host", "extra:10.9.9.9", "busybox", "sleep", "300");
    const [ip, id12, webId12] = [await ipOf("db"), await shortId("db"), await shortId("web")];
    const per = (alias: string, port: number, proto: string) => {
      const p = `${alias}_PORT_${port}_${proto.toUpperCase()}`;
      return [`${p}=${proto}://${ip}:${port}`, `${p}_ADDR=${ip}`, `${p}_PORT=${port}`, `${p}_PROTO=${proto}`];
    };
    const linkVars = (alias: string, name: string) => [
      `${alias}_PORT=tcp://${ip}:5432`,
      ...per(alias, 5432, "tcp"),
      ...per(alias, 7000, "tcp"),
      ...per(alias, 7001, "tcp"),
      ...per(alias, 53, "udp"),
      `${alias}_PORT_7000_TCP_START=tcp://${ip}:7000`,
      `${alias}_PORT_7000_TCP_PORT_START=7000`,
      `${alias}_PORT_7000_TCP_END=tcp://${ip}:7001`,
      `${alias}_PORT_7000_TCP_PORT_END=7001`,
      `${alias}_NAME=${name}`,
      `${alias}_ENV_FOO=bar`,
    ];
    const env = await environ("web");
    expect(env.slice(0, 2)).to.deep.equal(["PATH=/bin", `HOSTNAME=${webId12}`]);
    const expected = [...linkVars("MY_DB", "/web/my-db"), ...linkVars("DB", "/web/db")];
    expect(env.slice(2, 2 + expected.length)).to.deep.equal(expected);
    // exec'd processes see them too
    expect(await ok("exec", "web", "sh", "-c", "echo $DB_PORT_5432_TCP_ADDR")).to.equal(`${ip}\n`);
    expect(await hostsTail("web", 4)).to.deep.equal([
      "10.9.9.9\textra",
      `${ip}\tmy-db ${id12} db`,
      `${ip}\tdb ${id12}`,
      `${await ipOf("web")}\t${webId12}`,
    ]);
    expect(JSON.parse(await inspect("web", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db:/web/my-db", "/db:/web/db"]);
    expect(await inspect("db", "{{json .HostConfig.Links}}")).to.equal("null");
    expect(await names()).to.deep.equal([["/db", "/web/db", "/web/my-db"], ["/web"]]);
    expect((await ok("ps", "--format", "{{.Names}}")).trim().split("\n").sort()).to.deep.equal(["db", "web"]);
    expect((await ok("ps", "--no-trunc", "--format", "{{.Names}}")).trim().split("\n").sort()).to.deep.equal(["db,web/db,web/my-db", "web"]);
    // a link's name finds the child, as a name does
    expect(await inspect("web/my-db", "{{.Name}}")).to.equal("/db");
    // the container's own Env replaces a link's variable in place
    await ok("run", "-d", "--name", "web2", "--link", "db:a", "-e", "A_NAME=mine", "busybox", "sleep", "300");
    const env2 = await environ("web2");
    expect(env2.indexOf("A_NAME=mine")).to.equal(env2.indexOf("A_ENV_FOO=bar") - 1);
    expect(env2.filter((e) => e.startsWith("A_NAME="))).to.deep.equal(["A_NAME=mine"]);
  });

  it("removes one link with rm --link, with Docker's answers for what is not a link", async function () {
    await ok("run", "-d", "--name", "db", "busybox", "sleep", "300");
    await ok("run", "-d", "--name", "web", "--link", "db:al", "--link", "db", "busybox", "sleep", "300");
    const id12 = await shortId("db");
    expect((await api("DELETE", "/containers/db")).status).to.equal(409);
    const answers: [string, number, string | undefined][] = [
      ["db?link=1", 409, "Conflict, cannot remove the default link name of the container"],
      ["web?link=1", 409, "Conflict, cannot remove the default link name of the container"],
      ["web/nope?link=1", 404, "No such container: web/nope"],
      ["nope/al?link=1", 404, "No such container: nope/al"],
      ["web/al?link=true", 204, undefined],
    ];
    for (const [path, status, message] of answers) {
      expect(await api("DELETE", `/containers/${path}`), path).to.deep.equal({ status, body: message ? { message } : {} });
    }
    expect(JSON.parse(await inspect("web", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db:/web/db"]);
    expect(await hostsTail("web", 2)).to.deep.equal([`${await ipOf("db")}\tdb ${id12}`, `${await ipOf("web")}\t${await shortId("web")}`]);
    expect(await names()).to.deep.equal([["/db", "/web/db"], ["/web"]]);
    await ok("rm", "--link", "web/db");
    expect(await fails("rm", "--link", "/web/db")).to.include("No such container: web/db");
    expect(await inspect("web", "{{json .HostConfig.Links}}")).to.equal("null");
    // db runs: a link did not stop its removal, and none holds it now
    await ok("rm", "-f", "db");
  });

  it("the engine client: run --link and rm --link", async function () {
    const eng = async (...a: string[]) => {
      const r = await engine(n.host, a);
      expect(r.code, `engine ${a.join(" ")}: ${r.stderr}`).to.equal(0);
      return r.stdout;
    };
    await eng("run", "-d", "--name", "db", "-e", "K=v", "busybox", "sleep", "300");
    await eng("run", "-d", "--name", "web", "--link", "db:al", "busybox", "sleep", "300");
    expect(await ok("exec", "web", "sh", "-c", "echo $AL_NAME $AL_ENV_K")).to.equal("/web/al v\n");
    await eng("rm", "--link", "web/al");
    expect(await inspect("web", "{{json .HostConfig.Links}}")).to.equal("null");
    await ok("network", "create", "links-net");
    await eng("run", "-d", "--name", "udb", "--network", "links-net", "busybox", "sleep", "300");
    await eng("run", "-d", "--name", "uweb", "--network", "links-net", "--link", "udb:ual", "busybox", "sleep", "300");
    expect(await inspect("uweb", '{{json (index .NetworkSettings.Networks "links-net").Links}}')).to.equal('["udb:ual"]');
  });

  it("follows renames, a child's new address, and refuses to start with a child stopped or removed", async function () {
    await ok("run", "-d", "--name", "db", "-e", "X=1", "busybox", "sleep", "300");
    await ok("run", "-d", "--name", "web", "--link", "db:al", "busybox", "sleep", "300");
    await ok("rename", "web", "web2");
    expect(JSON.parse(await inspect("web2", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db:/web2/al"]);
    await ok("rename", "db", "db9");
    expect(JSON.parse(await inspect("web2", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db9:/web2/al"]);
    expect(await names()).to.deep.equal([["/db9", "/web2/al"], ["/web2"]]);
    const id12 = await shortId("db9");
    // the running parent keeps what its start wrote; the next start takes the new names
    expect((await hostsTail("web2", 2))[0]).to.equal(`${await ipOf("db9")}\tal ${id12} db`);
    await ok("restart", "-t", "0", "web2");
    expect((await hostsTail("web2", 2))[0]).to.equal(`${await ipOf("db9")}\tal ${id12} db9`);
    expect(await ok("exec", "web2", "sh", "-c", "echo $AL_NAME $AL_ENV_X")).to.equal("/web2/al 1\n");

    // started again on another address: the running parent's line follows
    await ok("stop", "-t", "0", "db9");
    expect(await fails("restart", "-t", "0", "web2")).to.include("Cannot link to a non running container: /db9 AS /web2/al");
    await ok("start", "db9");
    await ok("start", "web2");
    const before = await ipOf("db9");
    await ok("stop", "-t", "0", "db9");
    await ok("run", "-d", "--name", "filler", "busybox", "sleep", "300");
    await ok("start", "db9");
    const after = await ipOf("db9");
    expect(after).to.not.equal(before);
    expect((await hostsTail("web2", 2))[0]).to.equal(`${after}\tal ${id12} db9`);

    // removed: the link stays (inspect shows it) and the parent cannot start
    await ok("rm", "-f", "db9");
    expect(JSON.parse(await inspect("web2", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db9:/web2/al"]);
    await ok("stop", "-t", "0", "web2");
    const start = await api("POST", "/containers/web2/start");
    expect(start).to.deep.equal({ status: 409, body: { message: "Cannot link to a non running container: /db9 AS /web2/al" } });
  });

  it("on a user-defined network: the endpoint's links, resolved for the linking container alone", async function () {
    await ok("network", "create", "links-net");
    await ok("run", "-d", "--name", "udb", "--net", "links-net", "busybox", "sleep", "300");
    await ok("run", "-d", "--name", "uweb", "--net", "links-net", "--link", "udb:ual", "busybox", "sleep", "300");
    await ok("run", "-d", "--name", "other", "--net", "links-net", "busybox", "sleep", "300");
    expect(await inspect("uweb", "{{json .HostConfig.Links}} {{json .NetworkSettings.Networks}}")).to.match(/^null \{"links-net":\{"IPAMConfig":null,"Links":\["udb:ual"\]/);
    expect(await names()).to.deep.equal([["/other"], ["/udb"], ["/uweb"]]);
    const udbIp = await inspect("udb", '{{(index .NetworkSettings.Networks "links-net").IPAddress}}');
    expect(await ok("exec", "uweb", "nslookup", "ual")).to.include(`Address: ${udbIp}`);
    expect((await run("exec", "other", "nslookup", "ual")).stdout).to.not.include(udbIp);
    expect(await ok("exec", "uweb", "sh", "-c", "env | grep -c ^UAL_ || true")).to.equal("0\n");
    // a child that exists is not asked for there
    await ok("create", "--name", "uweb2", "--net", "links-net", "--link", "nothere:zz", "busybox", "true");
    expect(await inspect("uweb2", '{{json (index .NetworkSettings.Networks "links-net").Links}}')).to.equal('["nothere:zz"]');
    // from the default network, a child on another network cannot be linked at start
    await ok("create", "--name", "bweb", "--link", "udb:x", "busybox", "sleep", "300");
    expect(await fails("start", "bweb")).to.include("Cannot link to /udb, as it does not belong to the default network");
    const bad = await api("POST", "/containers/create?name=badlink", { Image: "busybox", HostConfig: { NetworkMode: "links-net" }, NetworkingConfig: { EndpointsConfig: { "links-net": { Links: ["a:b:c"] } } } });
    expect(bad.status).to.equal(201);
    expect(await api("POST", "/containers/badlink/start")).to.deep.equal({ status: 400, body: { message: "bad format for links: a:b:c" } });
  });

  it("resolves the links again by name at a daemon restart, as Docker's restore: one removed is back, a name of a new container links to it, a renamed child ends them", async function () {
    for (const name of ["db", "dbx", "swap", "moved", "gone"]) await ok("run", "-d", "--name", name, "-e", `WHO=${name}-old`, "busybox", "sleep", "300");
    const links = ["db:al", "dbx:bx", "swap:sw", "moved:mv", "gone:gg"].flatMap((l) => ["--link", l]);
    await ok("run", "-d", "--name", "web", ...links, "busybox", "sleep", "300");
    await ok("rm", "--link", "web/bx");
    await ok("rm", "-f", "swap", "gone");
    await ok("run", "-d", "--name", "swap", "-e", "WHO=swap-new", "busybox", "sleep", "300");
    await ok("rename", "moved", "moved2");
    expect(JSON.parse(await inspect("web", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db:/web/al", "/swap:/web/sw", "/moved2:/web/mv", "/gone:/web/gg"]);
    await n.d.stop();
    n = await startNetDaemon(["--shutdown-timeout", "1"], { netns: ns, roots });
    // db and dbx as named; swap: the container that has the name now; moved: no container of
    // that name any more, which ends the parent's links there (gone after it is not looked at)
    expect(JSON.parse(await inspect("web", "{{json .HostConfig.Links}}"))).to.deep.equal(["/db:/web/al", "/dbx:/web/bx", "/swap:/web/sw"]);
    expect(await names()).to.deep.equal([["/db", "/web/al"], ["/dbx", "/web/bx"], ["/moved2"], ["/swap", "/web/sw"], ["/web"]]);
    await ok("start", "db", "dbx", "swap", "web");
    expect((await hostsTail("web", 4))[0]).to.equal(`${await ipOf("db")}\tal ${await shortId("db")} db`);
    expect(await ok("exec", "web", "sh", "-c", "echo $AL_NAME $BX_NAME $SW_ENV_WHO ${MV_NAME:-none}")).to.equal("/web/al /web/bx swap-new none\n");
  });
});
