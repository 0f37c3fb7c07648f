/**
 * Authorization fails closed, against a real engined with the example policy plugin (no
 * privileged containers) loaded in-process, and a second in-process plugin that records the
 * URI it was asked about:
 * - a JSON body larger than plugins are shown (1 MiB) is refused with 413 before any handler,
 *   whether its size is declared (Content-Length) or not (chunked); Docker's daemon would create
 *   the padded privileged container unjudged;
 * - spellings of a route that the router forgives (trailing and doubled slashes, percent-encoded
 *   path characters) are judged as the route they reach, or reach none: the policy is never
 *   walked around, and the URI a plugin sees is the matched one.
 */
import "./helpers/root-hooks.js";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

interface Answer {
  status: number;
  body: string;
}

/** A request sent exactly as given: the path is not cleaned, the body may go chunked. */
function rawRequest(socketPath: string, method: string, path: string, body: Buffer, opts: { chunked?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (!opts.chunked) headers["content-length"] = String(body.length);
    const req = request({ socketPath, method, path, headers, timeout: 30_000 }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    if (opts.chunked) {
      // several writes, so that Node sends it chunked with no Content-Length
      for (let i = 0; i < body.length; i += 256 * 1024) req.write(body.subarray(i, i + 256 * 1024));
      req.end();
    } else req.end(body);
  });
}

/** A privileged create, padded with a label past `size` bytes. */
function paddedPrivileged(size: number): Buffer {
  return Buffer.from(JSON.stringify({ Image: "busybox", Cmd: ["true"], Labels: { pad: "x".repeat(size) }, HostConfig: { Privileged: true } }));
}

describe("authorization fails closed", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let record: string;
  const containers = async () => JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/containers/json?all=1")).body) as unknown[];
  const recorded = () => readFileSync(record, "utf8").split("\n").filter(Boolean);

  before(async () => {
    const work = makeTempDir("engine-authz-closed-");
    record = join(work, "uris");
    writeFileSync(record, "");
    const recorder = join(work, "recorder.mjs");
    writeFileSync(
      recorder,
      `import { appendFileSync } from "node:fs";
export default {
  manifest: { id: "authz.recorder", kind: "authz", description: "records what it judges" },
  apply(hooks) {
    hooks.authorizeRequest.tap("authz.recorder", (r) => { appendFileSync(${JSON.stringify(record)}, r.method + " " + r.uri + "\\n"); return undefined; });
  },
};
`,
    );
    d = await startEngined({
      args: ["--authorization-plugin", join(ROOT, "host/authz-remote/examples/policy/in-process.mjs"), "--authorization-plugin", recorder],
    });
    const r = await docker(`unix://${d.socket}`, ["import", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  after(async () => d?.stop());

  it("refuses with 413 a JSON body larger than plugins are shown, declared or chunked, and creates nothing", async () => {
    for (const chunked of [false, true]) {
      const res = await rawRequest(d.socket, "POST", "/v1.51/containers/create", paddedPrivileged(1024 * 1024 + 10), { chunked });
      expect(res.status, res.body).to.equal(413);
      expect(JSON.parse(res.body).message).to.include("larger than the 1048576 bytes an authorization plugin is shown");
    }
    expect(await containers()).to.deep.equal([]);
  });

  it("still judges a body under the cap: a padded privileged create is denied, an ordinary one created", async () => {
    const denied = await rawRequest(d.socket, "POST", "/v1.51/containers/create", paddedPrivileged(1000 * 1000));
    expect(denied.status, denied.body).to.equal(403);
    expect(JSON.parse(denied.body).message).to.equal("authorization denied by plugin policy: privileged containers are not allowed");
    const plain = await rawRequest(d.socket, "POST", "/v1.51/containers/create", Buffer.from(JSON.stringify({ Image: "busybox", Cmd: ["true"] })));
    expect(plain.status, plain.body).to.equal(201);
    const id = JSON.parse(plain.body).Id as string;
    expect((await httpRequest({ socketPath: d.socket }, "DELETE", `/v1.51/containers/${id}`)).status).to.equal(204);
  });

  it("judges every spelling of a route as the route it reaches, or it reaches none", async () => {
    const body = paddedPrivileged(10);
    const spellings = [
      "/containers/create/",
      "//v1.51/containers/create",
      "/v1.51//containers//create",
      "/v1.51/%63ontainers/create",
      "/v1.51/containers/%63reate?name=sneaky",
      "/v1.51/containers%2Fcreate",
      "/v1.51/containers/create/?name=sneaky2",
    ];
    for (const path of spellings) {
      writeFileSync(record, "");
      const res = await rawRequest(d.socket, "POST", path, body);
      expect([403, 404], `${path}: ${res.status} ${res.body}`).to.include(res.status);
      if (res.status === 403) {
        expect(JSON.parse(res.body).message).to.equal("authorization denied by plugin policy: privileged containers are not allowed");
      }
    }
    expect(await containers()).to.deep.equal([]);

    // what a plugin is shown: the matched route, the version asked for, the query as sent
    const shown = async (path: string) => {
      writeFileSync(record, "");
      await rawRequest(d.socket, "GET", path, Buffer.alloc(0));
      return recorded();
    };
    expect(await shown("/v1.51//containers/json/?all=1")).to.deep.equal(["GET /v1.51/containers/json?all=1"]);
    expect(await shown("/v1.51/%63ontainers/json")).to.deep.equal(["GET /v1.51/containers/json"]);
    expect(await shown("/containers/json/")).to.deep.equal(["GET /containers/json"]);
    expect(await shown("/v1.51/containers/%61bc%3Fdef/json")).to.deep.equal(["GET /v1.51/containers/abc%3Fdef/json"]);
    expect(await shown("/v1.51/images/library/busy%62ox/json")).to.deep.equal(["GET /v1.51/images/library/busybox/json"]);
  });
});
