/**
 * The filters of `GET /containers/json` that read creation order, exit codes, networks, volumes
 * and ports, with the Docker CLI (`docker ps --filter`) and dockerode, against `bin/engined` in a
 * network namespace of its own (for a user-defined network and a published port). Five
 * containers, made in this order: `f-created` (never started, a bind mount, exposed udp ports),
 * `f-three` (exited 3), `f-web` (running on the host network, a named volume, `--expose 80`),
 * `f-pub` (running on a user network, `-p 127.0.0.1:18080:80`), `f-zero` (exited 0). What each
 * answers was first seen on dockerd 20.10 with the same containers.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("container list filters: before, since, exited, network, volume, publish, expose, is-task", function () {
  this.timeout(180_000);
  let n: NetDaemon;
  let api: Docker;
  let bindDir: string;
  let netId: string;
  /** `docker ps --filter` for each of `filters`, the names it shows, newest first. */
  const ps = async (all: boolean, ...filters: string[]) =>
    (await n.cli("ps", ...(all ? ["-a"] : []), ...filters.flatMap((f) => ["--filter", f]), "--format", "{{.Names}}")).split("\n").filter(Boolean);
  const sdk = async (filters: Record<string, string[]>) => (await api.listContainers({ all: true, filters })).map((c) => c.Names[0].slice(1));
  const refused = async (filter: string) => {
    const r = await docker(n.host, ["ps", "-a", "--filter", filter]);
    expect(r.code, `docker ps --filter ${filter} should fail`).to.not.equal(0);
    return r.stderr;
  };

  before(async function () {
    n = await startNetDaemon();
    api = new Docker({ socketPath: n.d.socket });
    bindDir = makeTempDir("engine-filters-");
    netId = (await n.cli("network", "create", "f-net")).trim();
    await n.cli("create", "--name", "f-created", "--network", "none", "-v", `${bindDir}:/hostdir`, "--expose", "7000-7001/udp", "busybox", "true");
    const three = await docker(n.host, ["run", "--name", "f-three", "--network", "none", "busybox", "sh", "-c", "exit 3"]);
    expect(three.code).to.equal(3);
    await n.cli("run", "-d", "--name", "f-web", "--network", "host", "-v", "f-vol:/data", "--expose", "80", "busybox", "sleep", "300");
    await n.cli("run", "-d", "--name", "f-pub", "--network", "f-net", "-p", "127.0.0.1:18080:80", "busybox", "sleep", "300");
    await n.cli("run", "--name", "f-zero", "--network", "none", "busybox", "true");
  });
  after(async function () {
    if (n) {
      const ids = (await n.cli("ps", "-aq").catch(() => "")).split("\n").filter(Boolean);
      if (ids.length) await docker(n.host, ["rm", "-f", ...ids]);
      await docker(n.host, ["network", "rm", "f-net"]);
      await docker(n.host, ["volume", "rm", "f-vol"]);
      await n.stop();
    }
  });

  it("before and since: created earlier or later than the container of that name or full id; unknown is a 404", async function () {
    expect(await ps(true, "before=f-web")).to.deep.equal(["f-three", "f-created"]);
    const webId = (await n.cli("inspect", "-f", "{{.Id}}", "f-web")).trim();
    expect(await ps(true, `before=${webId}`)).to.deep.equal(["f-three", "f-created"]);
    // a full id or a name: Docker's daemon takes no id prefix here
    expect(await refused(`before=${webId.slice(0, 12)}`)).to.include(`No such container: ${webId.slice(0, 12)}`);
    // since, like before, does not imply -a
    expect(await ps(false, "since=f-three")).to.deep.equal(["f-pub", "f-web"]);
    expect(await ps(true, "since=f-three")).to.deep.equal(["f-zero", "f-pub", "f-web"]);
    expect(await ps(true, "since=f-created", "before=f-pub")).to.deep.equal(["f-web", "f-three"]);
    expect(await sdk({ before: ["f-web"] })).to.deep.equal(["f-three", "f-created"]);
    expect(await sdk({ since: ["f-pub"] })).to.deep.equal(["f-zero"]);
    expect(await refused("before=nope")).to.include("No such container: nope");
    const err = await api.listContainers({ all: true, filters: { since: ["nope"] } }).catch((e: { statusCode: number }) => e);
    expect((err as { statusCode: number }).statusCode).to.equal(404);
  });

  it("exited: stopped containers that ran and ended with that code; not a number is a 400", async function () {
    expect(await ps(true, "exited=3")).to.deep.equal(["f-three"]);
    expect(await ps(true, "exited=0")).to.deep.equal(["f-zero"]); // f-created never ran
    expect(await ps(true, "exited=0", "exited=3")).to.deep.equal(["f-zero", "f-three"]);
    expect(await ps(false, "exited=3")).to.deep.equal([]); // as dockerd 20.10: no -a, no stopped ones
    // status, unlike exited, lists stopped containers without -a, as Docker's daemon does
    expect(await ps(false, "status=exited")).to.deep.equal(["f-zero", "f-three"]);
    expect(await sdk({ exited: ["3"] })).to.deep.equal(["f-three"]);
    expect(await refused("exited=x")).to.include('strconv.Atoi: parsing "x": invalid syntax');
    const err = await api.listContainers({ all: true, filters: { exited: ["x"] } }).catch((e: { statusCode: number }) => e);
    expect((err as { statusCode: number }).statusCode).to.equal(400);
  });

  it("network: by name or id prefix", async function () {
    expect(await ps(true, "network=host")).to.deep.equal(["f-web"]);
    expect(await ps(true, "network=none")).to.deep.equal(["f-zero", "f-three", "f-created"]);
    expect(await ps(true, "network=f-net")).to.deep.equal(["f-pub"]);
    expect(await ps(true, `network=${netId.slice(0, 10)}`)).to.deep.equal(["f-pub"]);
    expect(await ps(true, "network=bridge")).to.deep.equal([]);
    expect(await sdk({ network: ["f-net", "host"] })).to.deep.equal(["f-pub", "f-web"]);
  });

  it("volume: by a volume's name, a bind's source, or a mount's destination", async function () {
    expect(await ps(true, "volume=f-vol")).to.deep.equal(["f-web"]);
    expect(await ps(true, "volume=/data")).to.deep.equal(["f-web"]);
    expect(await ps(true, `volume=${bindDir}`)).to.deep.equal(["f-created"]);
    expect(await ps(true, "volume=/hostdir")).to.deep.equal(["f-created"]);
    expect(await ps(true, "volume=other")).to.deep.equal([]);
    expect(await sdk({ volume: ["/data", "/hostdir"] })).to.deep.equal(["f-web", "f-created"]);
  });

  it("publish and expose: a port or range with its protocol (tcp by default) among the ports shown", async function () {
    expect(await ps(true, "publish=18080")).to.deep.equal(["f-pub"]);
    expect(await ps(true, "publish=18000-18100/tcp")).to.deep.equal(["f-pub"]);
    expect(await ps(true, "publish=18080/udp")).to.deep.equal([]);
    expect(await ps(true, "publish=80")).to.deep.equal([]);
    // f-web, on the host's network, has no endpoint: it shows no port, exposed or not (dockerd 20.10 and 28 alike)
    expect(await ps(true, "expose=80")).to.deep.equal(["f-pub"]);
    expect(await ps(true, "expose=79-81/tcp")).to.deep.equal(["f-pub"]);
    // a container that does not run shows no ports, as Docker's list
    expect(await ps(true, "expose=7000/udp")).to.deep.equal([]);
    expect(await sdk({ publish: ["18080/tcp"] })).to.deep.equal(["f-pub"]);
    expect(await sdk({ expose: ["80"] })).to.deep.equal(["f-pub"]);
    expect(await refused("publish=1:2")).to.include("filter for 'publish' should not contain ':': 1:2");
    expect(await refused("expose=5-3")).to.include("error while looking up for expose 5-3: Invalid range specified for the Port: 5-3");
    expect(await refused("expose=70000")).to.include('error while looking up for expose 70000: strconv.ParseUint: parsing "70000": value out of range');
    const err = await api.listContainers({ all: true, filters: { publish: ["a"] } }).catch((e: { statusCode: number }) => e);
    expect((err as { statusCode: number }).statusCode).to.equal(400);
  });

  it("is-task: no container is a swarm task; not a boolean is a 400", async function () {
    expect(await ps(true, "is-task=true")).to.deep.equal([]);
    expect(await ps(true, "is-task=false")).to.deep.equal(["f-zero", "f-pub", "f-web", "f-three", "f-created"]);
    expect(await sdk({ "is-task": ["true"] })).to.deep.equal([]);
    expect(await sdk({ "is-task": ["false"] })).to.have.length(5);
    expect(await refused("is-task=maybe")).to.include("Invalid filter 'is-task=[maybe]'");
  });
});
