/**
 * Drivers an API client may name (a container's log driver, a network's driver, a volume's
 * driver, by any of the fields that carry one) are found by name only. A path in a request body
 * is a 400 that says so, and the module at that path is never imported: it would run as root in
 * the daemon (and, for a log driver, in the supervisor). The operator's own path (`--log-driver
 * /path`) still loads, and a client that repeats it gets that driver.
 */
import "./helpers/root-hooks.js";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

/**
 * A module that leaves a marker file when it is imported, and is otherwise a valid plugin of
 * `kind` (so that only the path rule, not a broken manifest, can stop it).
 */
function markerPlugin(dir: string, kind: string, marker: string): string {
  const file = join(dir, `evil-${kind}.mjs`);
  writeFileSync(
    file,
    `import { writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(marker)}, "imported\\n");
export default { manifest: { id: "${kind}.evil", kind: "${kind}", version: "1.0.0", description: "marker" }, apply() {} };
`,
  );
  return file;
}

describe("drivers an API client names", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let work: string;
  const markers: string[] = [];
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, path, body);

  before(async () => {
    work = makeTempDir("engine-driver-names-");
    d = await startEngined({ cwd: work });
    const r = await docker(`unix://${d.socket}`, ["import", writeFixture(work, "busybox.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  after(async () => {
    await d?.stop();
  });
  afterEach(() => {
    for (const m of markers) expect(existsSync(m), `${m} was written: the module was imported`).to.equal(false);
  });

  /** The same plugin by an absolute path, by `./` from the daemon's working folder, and by `../`. */
  function pathsTo(kind: string): string[] {
    const marker = join(work, `marker-${kind}`);
    markers.push(marker);
    const sub = join(work, "sub");
    mkdirSync(sub, { recursive: true });
    const file = markerPlugin(sub, kind, marker);
    return [file, `./${relative(work, file)}`, `../${relative(join(work, ".."), file)}`];
  }

  function expectRefused(res: { status: number; body: string }, kind: string, path: string): void {
    expect(res.status, res.body).to.equal(400);
    const { message } = JSON.parse(res.body) as { message: string };
    expect(message).to.include(`${kind} driver "${path}" is a path`);
    expect(message).to.include("chosen by name");
  }

  it("refuses a log driver given as a path in HostConfig.LogConfig.Type, loading nothing", async () => {
    for (const path of pathsTo("log")) {
      const res = await api("POST", "/v1.51/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig: { LogConfig: { Type: path, Config: {} } } });
      expectRefused(res, "log", path);
    }
  });

  it("refuses a network driver given as a path in POST /networks/create, loading nothing", async () => {
    for (const [i, path] of pathsTo("network").entries()) {
      const res = await api("POST", "/v1.51/networks/create", { Name: `evil${i}`, Driver: path });
      expectRefused(res, "network", path);
    }
    expect((await api("GET", "/v1.51/networks")).body).to.not.include("evil");
  });

  it("refuses a volume driver given as a path: volume create, HostConfig.VolumeDriver, a Mount's DriverConfig", async () => {
    for (const path of pathsTo("volume")) {
      expectRefused(await api("POST", "/v1.51/volumes/create", { Name: "evil", Driver: path }), "volume", path);
      const byVolumeDriver = await api("POST", "/v1.51/containers/create", {
        Image: "busybox",
        Cmd: ["true"],
        HostConfig: { VolumeDriver: path, Binds: ["evilvol:/data"] },
      });
      expectRefused(byVolumeDriver, "volume", path);
      const byMount = await api("POST", "/v1.51/containers/create", {
        Image: "busybox",
        Cmd: ["true"],
        HostConfig: { Mounts: [{ Type: "volume", Source: "evilmount", Target: "/data", VolumeOptions: { DriverConfig: { Name: path } } }] },
      });
      expectRefused(byMount, "volume", path);
    }
    expect((await api("GET", "/v1.51/volumes")).body).to.not.include("evil");
    expect(JSON.parse((await api("GET", "/v1.51/containers/json?all=1")).body)).to.deep.equal([]);
  });

  it("still loads a log driver the operator gives as a path, also when a client names that same path", async () => {
    const dir = makeTempDir("engine-operator-log-");
    const plugin = join(dir, "log-copy.mjs");
    // the built-in json-file driver, as a plugin of its own at a path of the operator's
    writeFileSync(
      plugin,
      `import { createJsonFileLogDriver } from ${JSON.stringify(join(ROOT, "dist/plugins/log-json-file/index.js"))};
export default {
  manifest: { id: "log.copy", kind: "log", version: "1.0.0", description: "json-file, by path" },
  apply(hooks) { hooks.createLogDriver.for("copy").tap("log.copy", () => createJsonFileLogDriver()); },
};
`,
    );
    const op = await startEngined({ args: ["--log-driver", plugin] });
    try {
      const info = JSON.parse((await httpRequest({ socketPath: op.socket }, "GET", "/v1.51/info")).body) as { LoggingDriver: string; Plugins: Record<string, string[]> };
      expect(info.LoggingDriver).to.equal(plugin);
      // the drivers a client may name, as dockerd lists them: no `none` log driver, `host` and `null` networks
      expect(info.Plugins.Log).to.deep.equal(["journald", "json-file", "local", "syslog"]);
      expect(info.Plugins.Network).to.deep.equal(["bridge", "host", "null"]);
      const r = await docker(`unix://${op.socket}`, ["import", writeFixture(dir, "busybox.tar", await busyboxRootfs()), "busybox"]);
      expect(r.code, r.stderr).to.equal(0);
      const res = await httpRequest({ socketPath: op.socket }, "POST", "/v1.51/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig: { LogConfig: { Type: plugin, Config: {} } } });
      expect(res.status, res.body).to.equal(201);
    } finally {
      await op.stop();
    }
  });
});
