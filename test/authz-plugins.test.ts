/**
 * Authorization plugins in other processes, end to end: a real engined and real plugin
 * processes (test/fixtures/authz-recorder.ts) reached by name through a socket in
 * /run/engine/plugins, by name through a spec file in /etc/engine/plugins, and by the path of
 * a JSON spec file. What the plugins were sent is read from their record file.
 */
import { expect } from "chai";
import { request as httpRequestRaw, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { cleanUpPlugins, recordedCalls, removeLater, SOCKET_DIR, SPEC_DIR, startRecorder, uniqueName, type PluginProcess } from "./helpers/authz-plugin.js";
import { makeTempDir, runEngined, daemonArgs, sighup, startEngined, type TestDaemon } from "./helpers/engined.js";
import { tcpTarget } from "./helpers/http.js";

interface Answer {
  status: number;
  body: string;
}

/** One request with the headers the test chooses (and TLS options when given). */
function send(
  where: RequestOptions & { ca?: Buffer; cert?: Buffer; key?: Buffer },
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown; raw?: string; tls?: boolean } = {},
): Promise<Answer> {
  const payload = opts.raw !== undefined ? Buffer.from(opts.raw) : opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const headers = { ...(payload ? { "content-type": "application/json", "content-length": String(payload.length) } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = (opts.tls ? httpsRequest : httpRequestRaw)({ ...where, method, path, headers, timeout: 20_000 }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(payload);
  });
}

const message = (a: Answer) => (JSON.parse(a.body) as { message: string }).message;

async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("authorization plugins in other processes", function () {
  this.timeout(60_000);
  mkdirSync(SOCKET_DIR, { recursive: true });
  mkdirSync(SPEC_DIR, { recursive: true });

  after(cleanUpPlugins);

  describe("a chain of two: one on a socket, one through a spec file", function () {
    const first = uniqueName("first");
    const second = uniqueName("second");
    let record: string;
    let d: TestDaemon;
    let sock: RequestOptions;
    const calls = () => recordedCalls(record);
    const callsFor = (uriPart: string) => calls().filter((c) => c.call !== "Activate" && String(c.body.RequestUri).includes(uriPart));

    before(async function () {
      record = join(makeTempDir("engine-authz-"), "calls.jsonl");
      await startRecorder({
        name: first,
        record,
        socket: join(SOCKET_DIR, `${first}.sock`),
        rules: { denyRequest: { "first-says-no": "not on my watch", "/auth": "no logins here" } },
      });
      const tcp = await startRecorder({
        name: second,
        record,
        rules: { denyRequest: { "second-says-no": "nor on mine" }, denyResponse: { "/version": "versions are private" } },
      });
      writeFileSync(removeLater(join(SPEC_DIR, `${second}.spec`)), `tcp://127.0.0.1:${tcp.listening}\n`);
      d = await startEngined({ args: ["--authorization-plugin", first, "--authorization-plugin", second] });
      sock = { socketPath: d.socket };
    });

    after(async () => d?.stop());

    it("activates each plugin once, then asks both in order, request and response, and answers", async () => {
      const ping = await send(sock, "GET", "/_ping?allowed=1");
      expect(ping.status).to.equal(200);
      expect(ping.body).to.equal("OK");
      // (another test's daemon listing volumes activates every plugin in the folder once too, as Docker's does: counted by plugin)
      const activations = calls().filter((c) => c.call === "Activate");
      expect([...new Set(activations.map((c) => c.plugin))]).to.have.members([first, second]);
      expect(activations[0].accept).to.equal("application/vnd.docker.plugins.v1.2+json");
      expect(callsFor("allowed=1").map((c) => `${c.plugin} ${c.call}`)).to.deep.equal([
        `${first} AuthZReq`,
        `${second} AuthZReq`,
        `${first} AuthZRes`,
        `${second} AuthZRes`,
      ]);
      const res = callsFor("allowed=1")[2].body;
      expect(res).to.include({ RequestMethod: "GET", RequestUri: "/_ping?allowed=1", ResponseStatusCode: 200 });
      expect(Buffer.from(res.ResponseBody ?? "", "base64").toString()).to.equal("");
      expect(res.ResponseHeaders).to.have.property("Api-Version", "1.51");
      const before = calls().filter((c) => c.call === "Activate").length;
      await send(sock, "GET", "/_ping?again=1");
      expect(calls().filter((c) => c.call === "Activate")).to.have.length(before);
    });

    it("denies a request with the first plugin's message and does not ask the second, nor check the answer", async () => {
      const denied = await send(sock, "POST", "/v1.51/containers/create?name=first-says-no", { body: { Image: "busybox" } });
      expect(denied.status).to.equal(403);
      expect(message(denied)).to.equal(`authorization denied by plugin ${first}: not on my watch`);
      expect(callsFor("first-says-no").map((c) => `${c.plugin} ${c.call}`)).to.deep.equal([`${first} AuthZReq`]);
    });

    it("denies a request with the second plugin's message after the first allowed it", async () => {
      const denied = await send(sock, "POST", "/v1.51/containers/create?name=second-says-no", { body: { Image: "busybox" } });
      expect(denied.status).to.equal(403);
      expect(message(denied)).to.equal(`authorization denied by plugin ${second}: nor on mine`);
      expect(callsFor("second-says-no").map((c) => `${c.plugin} ${c.call}`)).to.deep.equal([`${first} AuthZReq`, `${second} AuthZReq`]);
    });

    it("denies an answer: the handler ran, the client gets 403 instead of its body", async () => {
      const denied = await send(sock, "GET", "/v1.51/version");
      expect(denied.status).to.equal(403);
      expect(message(denied)).to.equal(`authorization denied by plugin ${second}: versions are private`);
      const res = callsFor("/v1.51/version").find((c) => c.plugin === second && c.call === "AuthZRes")!.body;
      expect(res.ResponseStatusCode).to.equal(200);
      expect(JSON.parse(Buffer.from(res.ResponseBody, "base64").toString())).to.have.property("ApiVersion", "1.51");
      expect(res.ResponseHeaders["Content-Type"]).to.match(/^application\/json/);
    });

    it("sends the method, URI, headers in Go's form without credentials, and a JSON body in base64", async () => {
      const answer = await send(sock, "POST", "/v1.51/containers/create?name=headers-seen", {
        headers: { authorization: "Bearer sekrit", "x-registry-auth": "c2Vrcml0", "x-registry-config": "e30=", "x-custom-thing": "kept" },
        body: { Image: "no-such-image-here" },
      });
      expect(answer.status).to.equal(404);
      const req = callsFor("headers-seen").find((c) => c.plugin === first && c.call === "AuthZReq")!.body;
      expect(req).to.include({ RequestMethod: "POST", RequestUri: "/v1.51/containers/create?name=headers-seen" });
      expect(req).to.not.have.property("User");
      expect(req.RequestHeaders).to.include({ "Content-Type": "application/json", "X-Custom-Thing": "kept" });
      for (const hidden of ["Authorization", "X-Registry-Auth", "X-Registry-Config"]) expect(req.RequestHeaders).to.not.have.property(hidden);
      expect(JSON.parse(Buffer.from(req.RequestBody, "base64").toString())).to.deep.equal({ Image: "no-such-image-here" });
      const res = callsFor("headers-seen").find((c) => c.plugin === first && c.call === "AuthZRes")!.body;
      expect(res.ResponseStatusCode).to.equal(404);
      expect(JSON.parse(Buffer.from(res.ResponseBody, "base64").toString()).message).to.match(/no-such-image-here/);
      expect(readFileSync(record, "utf8")).to.not.match(/sekrit|c2Vrcml0/);
    });

    it("never sends a login's body, which holds a password", async () => {
      const denied = await send(sock, "POST", "/v1.51/auth", { body: { username: "u", password: "hunter2-password", serveraddress: "registry.test" } });
      expect(message(denied)).to.equal(`authorization denied by plugin ${first}: no logins here`);
      const req = callsFor("/v1.51/auth").find((c) => c.call === "AuthZReq")!.body;
      expect(req).to.not.have.property("RequestBody");
      expect(readFileSync(record, "utf8")).to.not.include("hunter2");
      // A body that is not JSON is not sent either.
      await send(sock, "POST", "/v1.51/containers/x/wait?not-json=1", { headers: { "content-type": "application/x-tar" } });
      expect(callsFor("not-json=1")[0].body).to.not.have.property("RequestBody");
    });

    it("asks about a body that is not valid JSON before answering that it is not", async () => {
      const answer = await send(sock, "POST", "/v1.51/containers/create?name=bad-json", { headers: { "content-type": "application/json" }, body: undefined, raw: "{not json" });
      expect(answer.status).to.equal(400);
      expect(message(answer)).to.match(/^invalid JSON: /);
      const seen = callsFor("bad-json");
      expect(seen.map((c) => `${c.plugin} ${c.call}`)).to.deep.equal([`${first} AuthZReq`, `${second} AuthZReq`, `${first} AuthZRes`, `${second} AuthZRes`]);
      expect(Buffer.from(seen[0].body.RequestBody, "base64").toString()).to.equal("{not json");
      expect(seen[2].body.ResponseStatusCode).to.equal(400);
    });

    it("lists the chain in /info", async () => {
      const info = JSON.parse((await send(sock, "GET", "/v1.51/info")).body);
      expect(info.Plugins.Authorization).to.deep.equal([`authz.${first}`, `authz.${second}`]);
    });
  });

  describe("the user from a TLS client certificate", function () {
    let certs: CertSet;
    let d: TestDaemon;
    let record: string;
    const name = uniqueName("tls");

    before(async function () {
      certs = makeCerts(join(makeTempDir("engine-authz-certs-"), "certs"));
      record = join(makeTempDir("engine-authz-"), "calls.jsonl");
      await startRecorder({ name, record, socket: join(SOCKET_DIR, `${name}.sock`) });
      const dir = makeTempDir();
      d = await startEngined({
        hosts: [`unix://${join(dir, "engine.sock")}`, "tcp://127.0.0.1:0"],
        args: ["--tlsverify", "--tlscacert", certs.ca, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey, "--authorization-plugin", name],
      });
    });

    after(async () => d?.stop());

    it("passes the certificate's common name as User, with UserAuthNMethod TLS and the certificate", async () => {
      const tcp = d.addresses().find((a) => a.startsWith("tcp://"))!;
      const client = (file: string) => readFileSync(join(certs.clientDir, file));
      const answer = await send({ ...tcpTarget(tcp), ca: client("ca.pem"), cert: client("cert.pem"), key: client("key.pem") }, "GET", "/v1.51/_ping?over=tls", { tls: true });
      expect(answer.status).to.equal(200);
      const req = recordedCalls(record).find((c) => c.call === "AuthZReq" && String(c.body.RequestUri).includes("over=tls"))!.body;
      expect(req).to.include({ User: "test-client", UserAuthNMethod: "TLS" });
      const pem = Buffer.from(req.RequestPeerCertificates[0], "base64").toString();
      expect(pem).to.match(/^-----BEGIN CERTIFICATE-----\n/);
      expect(pem.replace(/\s/g, "")).to.equal(readFileSync(join(certs.clientDir, "cert.pem"), "utf8").replace(/\s/g, ""));

      const unix = d.addresses().find((a) => a.startsWith("unix://"))!.slice("unix://".length);
      await send({ socketPath: unix }, "GET", "/v1.51/_ping?over=unix");
      const plain = recordedCalls(record).find((c) => c.call === "AuthZReq" && String(c.body.RequestUri).includes("over=unix"))!.body;
      expect(plain).to.not.have.property("User");
      expect(plain).to.not.have.property("UserAuthNMethod");
    });
  });

  describe("a plugin that fails, named twice (moby's TestAuthZPluginErrorRequest, TestAuthZPluginErrorResponse, TestAuthZPluginEnsureNoDuplicatePluginRegistration)", function () {
    const name = uniqueName("failing");
    let record: string;
    let d: TestDaemon;
    let sock: RequestOptions;
    const callsFor = (uriPart: string) => recordedCalls(record).filter((c) => c.call !== "Activate" && String(c.body.RequestUri).includes(uriPart));

    before(async function () {
      record = join(makeTempDir("engine-authz-"), "calls.jsonl");
      await startRecorder({
        name,
        record,
        socket: join(SOCKET_DIR, `${name}.sock`),
        rules: { errRequest: { "fail-request": "something went wrong..." }, errResponse: { "fail-response": "something went wrong..." } },
      });
      d = await startEngined({ args: ["--authorization-plugin", name, "--authorization-plugin", name] });
      sock = { socketPath: d.socket };
    });

    after(async () => d?.stop());

    it("names the call that failed and the plugin's Err, in Docker's words, for the request and for the answer", async () => {
      const req = await send(sock, "GET", "/v1.51/containers/json?fail-request=1");
      expect(message(req)).to.equal(`plugin ${name} failed with error: AuthZPlugin.AuthZReq: something went wrong...`);
      const res = await send(sock, "GET", "/v1.51/containers/json?fail-response=1");
      expect(message(res)).to.equal(`plugin ${name} failed with error: AuthZPlugin.AuthZRes: something went wrong...`);
    });

    it("asks a plugin named twice once per request and once per answer", async () => {
      expect((await send(sock, "GET", "/v1.51/containers/json?once=1")).status).to.equal(200);
      expect(callsFor("once=1").map((c) => c.call)).to.deep.equal(["AuthZReq", "AuthZRes"]);
    });
  });

  describe("a plugin that does not answer", function () {
    let d: TestDaemon;
    let plugin: PluginProcess;
    let record: string;
    let socket: string;
    let name: string;

    before(async function () {
      const dir = makeTempDir("engine-authz-");
      record = join(dir, "calls.jsonl");
      name = uniqueName("slow");
      socket = join(dir, "slow.sock");
      plugin = await startRecorder({ name, record, socket, rules: { hang: ["hang-here"] } });
      // Named by the path of a JSON spec file, with a short deadline.
      const spec = join(dir, `${name}.json`);
      writeFileSync(spec, JSON.stringify({ Addr: `unix://${socket}`, TimeoutSeconds: 1 }));
      d = await startEngined({ args: ["--authorization-plugin", spec] });
    });

    after(async () => d?.stop());

    it("denies when it does not answer in time, and goes on answering other requests", async () => {
      const started = Date.now();
      const [hung, other] = await Promise.all([send({ socketPath: d.socket }, "GET", "/v1.51/version?hang-here=1"), send({ socketPath: d.socket }, "GET", "/_ping")]);
      expect(hung.status).to.equal(403);
      expect(message(hung)).to.equal(`plugin ${name} failed with error: no answer from unix://${socket} to AuthZPlugin.AuthZReq within 1s`);
      expect(Date.now() - started).to.be.below(5_000);
      expect(other.status).to.equal(200);
    });

    it("denies while it is down, says why, and allows again once it is back", async () => {
      await plugin.stop("SIGKILL"); // a crash: the socket file stays, nothing listens
      const down = await send({ socketPath: d.socket }, "GET", "/_ping");
      expect(down.status).to.equal(403);
      expect(message(down)).to.match(new RegExp(`^plugin ${name} failed with error: cannot reach the plugin at unix://${socket}: connect ECONNREFUSED`));
      plugin = await startRecorder({ name, record, socket });
      expect((await send({ socketPath: d.socket }, "GET", "/_ping")).status).to.equal(200);
    });
  });

  describe("finding plugins", function () {
    it("refuses to start when a plugin is found nowhere, naming every place looked", async () => {
      const name = uniqueName("nowhere");
      const dir = makeTempDir();
      const r = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--authorization-plugin", name]);
      expect(r.code).to.equal(1);
      const logged = r.stderr.replaceAll('\\"', '"'); // the log line quotes the message
      for (const place of [`the socket ${SOCKET_DIR}/${name}.sock`, `the socket ${SOCKET_DIR}/${name}/${name}.sock`, `the spec file ${SPEC_DIR}/${name}.spec`, `the spec file ${SPEC_DIR}/${name}.json`, `the spec file /usr/lib/engine/plugins/${name}.json`]) {
        expect(logged).to.include(place);
      }
      expect(logged).to.include(`authz plugin "${name}" not found`);
    });

    it("refuses a spec file that is not valid, and a plugin that does not implement authz", async () => {
      const dir = makeTempDir();
      const bad = join(dir, "bad.spec");
      writeFileSync(bad, "just-a-word\n");
      const r = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--authorization-plugin", bad]);
      expect(r.code).to.equal(1);
      expect(r.stderr.replaceAll('\\"', '"')).to.include(`plugin spec file ${bad} is not valid: "just-a-word" is not an address`);

      const name = uniqueName("volume");
      const record = join(dir, "calls.jsonl");
      await startRecorder({ name, record, socket: join(SOCKET_DIR, `${name}.sock`), rules: { implements: ["VolumeDriver"] } });
      const d = await startEngined({ args: ["--authorization-plugin", name] });
      try {
        const denied = await send({ socketPath: d.socket }, "GET", "/_ping");
        expect(denied.status).to.equal(403);
        expect(message(denied)).to.equal(`plugin ${name} failed with error: it does not implement the authz interface (it implements: VolumeDriver)`);
        expect(d.output()).to.include(`authorization plugin ${name} cannot be used: every API request is refused until it answers`);
      } finally {
        await d.stop();
      }
    });
  });

  describe("reloading the chain", function () {
    it("swaps plugins while requests are in flight: each request is judged by one chain, start to end", async () => {
      const dir = makeTempDir("engine-authz-");
      const record = join(dir, "calls.jsonl");
      const before = uniqueName("before");
      const after = uniqueName("after");
      await startRecorder({ name: before, record, socket: join(SOCKET_DIR, `${before}.sock`), rules: { delayMs: { "slow=": 1500 } } });
      await startRecorder({ name: after, record, socket: join(SOCKET_DIR, `${after}.sock`) });
      const file = join(dir, "daemon.json");
      writeFileSync(file, JSON.stringify({ "authorization-plugins": [before] }));
      const d = await startEngined({ args: ["--config-file", file] });
      try {
        const sock = { socketPath: d.socket };
        const inFlight = [1, 2, 3, 4].map((i) => send(sock, "GET", `/v1.51/version?slow=${i}`));
        await waitFor("the slow requests to reach the plugin", () => recordedCalls(record).filter((c) => c.call === "AuthZReq").length >= 4);
        writeFileSync(file, JSON.stringify({ "authorization-plugins": [after] }));
        expect(await sighup(d)).to.include("reloaded authorization-plugins");
        const later = await Promise.all([1, 2, 3, 4].map((i) => send(sock, "GET", `/v1.51/version?later=${i}`)));
        const early = await Promise.all(inFlight);
        expect([...early, ...later].map((a) => a.status)).to.deep.equal(Array(8).fill(200));
        const seen = (plugin: string) =>
          recordedCalls(record)
            .filter((c) => c.plugin === plugin && c.call !== "Activate")
            .map((c) => `${c.call} ${String(c.body.RequestUri).split("?")[1]}`)
            .sort();
        expect(seen(before)).to.deep.equal([1, 2, 3, 4].flatMap((i) => [`AuthZReq slow=${i}`, `AuthZRes slow=${i}`]).sort());
        expect(seen(after)).to.deep.equal([1, 2, 3, 4].flatMap((i) => [`AuthZReq later=${i}`, `AuthZRes later=${i}`]).sort());

        // A reload that adds a plugin that is not running: the daemon refuses, and says so.
        const crashed = uniqueName("crashed");
        const stale = await startRecorder({ name: crashed, record, socket: join(SOCKET_DIR, `${crashed}.sock`) });
        await stale.stop("SIGKILL");
        writeFileSync(file, JSON.stringify({ "authorization-plugins": [after, crashed] }));
        const out = await sighup(d);
        expect(out).to.include("reloaded authorization-plugins");
        await waitFor("the log line", () => d.output().includes(`authorization plugin ${crashed} cannot be used: every API request is refused until it answers`));
        const refused = await send(sock, "GET", "/_ping");
        expect(refused.status).to.equal(403);
        expect(message(refused)).to.match(new RegExp(`^plugin ${crashed} failed with error: cannot reach the plugin`));

        // And one that removes it again.
        writeFileSync(file, JSON.stringify({ "authorization-plugins": [after] }));
        await sighup(d);
        expect((await send(sock, "GET", "/_ping")).status).to.equal(200);
      } finally {
        await d.stop();
      }
    });
  });
});
