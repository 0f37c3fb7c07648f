/**
 * What docker-py's own integration suite found different from Docker's daemon, each checked
 * against engined the way Docker answers: a commit racing the container's exit, a load's failure
 * as the stream's last line, link-local addresses, an unknown log driver's message, a query
 * parameter given twice, a volume created without a name, image configs with their always-listed
 * fields, Go's case-insensitive body keys (an exec's `detachKeys`), an endpoint's DriverOpts and
 * asked-for MAC, and an IPv6 pool on a network without IPv6. One daemon in a network namespace
 * of its own (net-daemon.ts), with its default bridge; the docker-py run itself is not part of
 * this suite (its files are not ours).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { request } from "node:http";
import { makeTar } from "./fixtures/images.js";
import { httpRequest } from "./helpers/http.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("docker-py compatibility (differences its integration suite found)", function () {
  this.timeout(120_000);

  let nd: NetDaemon;
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: nd.d.socket }, method, path, body);
  const json = async (method: string, path: string, body?: unknown, status = 200) => {
    const r = await api(method, path, body);
    expect(r.status, `${method} ${path}: ${r.body}`).to.equal(status);
    return r.body ? JSON.parse(r.body) : undefined;
  };
  /** A request with raw bytes as its body. */
  const raw = (method: string, path: string, body: Buffer, type: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ socketPath: nd.d.socket, method, path, headers: { "content-type": type, "content-length": body.length }, timeout: 60_000 }, (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", reject);
      req.end(body);
    });
  const made: string[] = [];
  const create = async (body: Record<string, unknown>) => {
    const { Id } = await json("POST", "/v1.51/containers/create", { Image: "busybox", ...body }, 201);
    made.push(Id);
    return Id as string;
  };

  before(async function () {
    nd = await startNetDaemon();
  });
  after(async function () {
    for (const id of made) await api("DELETE", `/v1.51/containers/${id}?force=1&v=1`).catch(() => undefined);
    await nd?.stop();
  });

  it("commits a container that exits while the commit would pause it, as Docker does a stopped one's (no 409)", async function () {
    // docker-py commits right after starting `touch /test`: the exit races the freeze
    for (let i = 0; i < 8; i++) {
      const id = await create({ Cmd: ["touch", `/test${i}`] });
      await json("POST", `/v1.51/containers/${id}/start`, undefined, 204);
      const r = await api("POST", `/v1.51/commit?container=${id}&pause=1`);
      expect(r.status, `commit ${i}: ${r.body}`).to.equal(201);
      await api("DELETE", `/v1.51/images/${JSON.parse(r.body).Id}`);
    }
  });

  it("keeps IPAMConfig.LinkLocalIPs (on the default bridge too) and puts them on the interface with Docker's prefixes", async function () {
    const id = await create({
      Cmd: ["ip", "-4", "addr", "show", "eth0"],
      HostConfig: { NetworkMode: "bridge" },
      NetworkingConfig: { EndpointsConfig: { bridge: { IPAMConfig: { LinkLocalIPs: ["169.254.8.8"] } } } },
    });
    const before = await json("GET", `/v1.51/containers/${id}/json`);
    expect(before.NetworkSettings.Networks.bridge.IPAMConfig).to.deep.equal({ LinkLocalIPs: ["169.254.8.8"] });
    await json("POST", `/v1.51/containers/${id}/start`, undefined, 204);
    expect((await json("POST", `/v1.51/containers/${id}/wait`)).StatusCode).to.equal(0);
    expect(await nd.cli("logs", id)).to.match(/inet 169\.254\.8\.8\/16 /);
    const bad = await api("POST", "/v1.51/containers/create", {
      Image: "busybox",
      HostConfig: { NetworkMode: "bridge" },
      NetworkingConfig: { EndpointsConfig: { bridge: { IPAMConfig: { LinkLocalIPs: ["nonsense"] } } } },
    });
    if (bad.status === 201) made.push(JSON.parse(bad.body).Id);
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.body).message).to.include("invalid link-local IP address: nonsense");
  });

  it("refuses an unknown log driver with Docker's message, not the folders it looked in", async function () {
    const r = await api("POST", "/v1.51/containers/create", { Image: "busybox", HostConfig: { LogConfig: { Type: "asdf", Config: {} } } });
    expect(r.status).to.equal(400);
    expect(JSON.parse(r.body)).to.deep.equal({ message: 'error looking up logging plugin asdf: plugin "asdf" not found' });
  });

  it("reads a query parameter given twice by its first value, as Go does (docker-py's out-of-context Dockerfile)", async function () {
    const id = await create({ Cmd: ["true"] });
    const all = await json("GET", `/v1.51/containers/json?all=1&all=0&filters=${encodeURIComponent(JSON.stringify({ id: [id] }))}`);
    expect(all.map((c: { Id: string }) => c.Id)).to.deep.equal([id]);
    // docker-py sends `dockerfile=<its name in the context>&dockerfile=<its text>`
    const text = "FROM busybox\nLABEL from=outside\n";
    const context = await makeTar([{ name: ".dockerfile.0a1b", data: text }, { name: "file.txt", data: "x" }]);
    const build = await raw("POST", `/v1.51/build?t=dpy-outside&dockerfile=.dockerfile.0a1b&dockerfile=${encodeURIComponent(text)}`, context, "application/x-tar");
    expect(build.status).to.equal(200);
    expect(build.body).to.include("Successfully tagged dpy-outside:latest");
    expect((await json("GET", "/v1.51/images/dpy-outside/json")).Config.Labels).to.deep.equal({ from: "outside" });
    await api("DELETE", "/v1.51/images/dpy-outside");
  });

  it("answers a failed load with 200 and the error as the last line, which docker-py raises as ImageLoadError", async function () {
    const r = await raw("POST", "/v1.51/images/load", Buffer.from("abc"), "application/x-tar");
    expect(r.status).to.equal(200);
    const last = JSON.parse(r.body.trim().split("\n").at(-1)!);
    expect(last.error).to.match(/^invalid image archive: /);
    expect(last.errorDetail).to.deep.equal({ message: last.error });
  });

  it("labels a volume created without a name as anonymous, so that a prune takes it", async function () {
    const v = await json("POST", "/v1.51/volumes/create", {}, 201);
    expect(v.Name).to.match(/^[0-9a-f]{64}$/);
    expect(v.Labels).to.deep.equal({ "com.docker.volume.anonymous": "" });
    await json("POST", "/v1.51/volumes/create", { Name: "dpy-named" }, 201);
    const pruned = await json("POST", "/v1.51/volumes/prune");
    expect(pruned.VolumesDeleted).to.include(v.Name);
    expect(pruned.VolumesDeleted).to.not.include("dpy-named");
    await api("DELETE", "/v1.51/volumes/dpy-named");
  });

  it("lists an image config's always-present fields at their empty values: eight from API 1.50, all seventeen before", async function () {
    const now = (await json("GET", "/v1.51/images/busybox/json")).Config;
    expect(now).to.include({ OnBuild: null, Entrypoint: null, Labels: null, Volumes: null, User: "", WorkingDir: "" });
    expect(now.Cmd).to.deep.equal(["sh"]);
    expect(now).to.not.have.property("Hostname");
    const old = (await json("GET", "/v1.41/images/busybox/json")).Config;
    expect(old).to.include({ Hostname: "", Domainname: "", AttachStdin: false, Tty: false, OpenStdin: false, Image: "", OnBuild: null });
    expect(old.Cmd).to.deep.equal(["sh"]);
  });

  it("takes an exec's `detachKeys` for DetachKeys, as Go's decoder does, and shows the keys' bytes as Docker does", async function () {
    const id = await create({ Cmd: ["sleep", "60"] });
    await json("POST", `/v1.51/containers/${id}/start`, undefined, 204);
    const lower = await json("POST", `/v1.51/containers/${id}/exec`, { Cmd: ["true"], detachKeys: "ctrl-p" }, 201);
    expect((await json("GET", `/v1.51/exec/${lower.Id}/json`)).DetachKeys).to.equal("EA==");
    const exact = await json("POST", `/v1.51/containers/${id}/exec`, { Cmd: ["true"], DetachKeys: "ctrl-p,q" }, 201);
    expect((await json("GET", `/v1.51/exec/${exact.Id}/json`)).DetachKeys).to.equal("EHE=");
    const none = await json("POST", `/v1.51/containers/${id}/exec`, { Cmd: ["true"] }, 201);
    expect((await json("GET", `/v1.51/exec/${none.Id}/json`)).DetachKeys).to.equal("");
  });

  it("shows an endpoint's DriverOpts, and before the first start the MAC a connect asked for", async function () {
    await json("POST", "/v1.51/networks/create", { Name: "dpy-net" }, 201);
    try {
      const id = await create({
        Cmd: ["sleep", "60"],
        HostConfig: { NetworkMode: "bridge" },
        NetworkingConfig: { EndpointsConfig: { bridge: { DriverOpts: { "com.docker-py.setting": "on" } } } },
      });
      await json("POST", "/v1.51/networks/dpy-net/connect", { Container: id, EndpointConfig: { MacAddress: "02:42:ac:11:00:02" } });
      const nets = (await json("GET", `/v1.51/containers/${id}/json`)).NetworkSettings.Networks;
      expect(nets.bridge.DriverOpts).to.deep.equal({ "com.docker-py.setting": "on" });
      expect(nets["dpy-net"].MacAddress).to.equal("02:42:ac:11:00:02");
      await api("DELETE", `/v1.51/containers/${id}?force=1`);
    } finally {
      await api("DELETE", "/v1.51/networks/dpy-net");
    }
  });

  it("takes an IPv6 pool on a network without IPv6 and leaves it unused, as Docker's daemon does", async function () {
    const { Id } = await json("POST", "/v1.51/networks/create", { Name: "dpy-v4only", IPAM: { Driver: "default", Config: [{ Subnet: "2001:389::/64" }] } }, 201);
    try {
      const net = await json("GET", `/v1.51/networks/${Id}`);
      expect(net.EnableIPv6).to.equal(false);
      expect(net.IPAM.Config.map((c: { Subnet: string }) => c.Subnet)).to.not.include("2001:389::/64");
    } finally {
      await api("DELETE", `/v1.51/networks/${Id}`);
    }
  });
});
