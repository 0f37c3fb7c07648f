/**
 * The example authorization plugin (host/authz-remote/examples/policy) with the Docker CLI
 * against a real engined: what the plugin's README promises a third party, checked as a user
 * would see it.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { join } from "node:path";
import { writeFileSync, mkdirSync } from "node:fs";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { cleanUpPlugins, SOCKET_DIR, startPolicyServer, uniqueName, type PluginProcess } from "./helpers/authz-plugin.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("the example authorization plugin, with the Docker CLI", function () {
  this.timeout(120_000);
  const name = uniqueName("policy");
  let certs: CertSet;
  let policy: PluginProcess;
  let d: TestDaemon;
  let unix: string;
  let tls: string;
  const tlsEnv = () => ({ DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: certs.clientDir });
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    const work = makeTempDir("engine-authz-example-");
    certs = makeCerts(join(work, "certs"));
    const policyFile = join(work, "policy.json");
    // The client certificate of the test CA is named test-client: it may look, not touch.
    writeFileSync(policyFile, JSON.stringify({ readOnlyUsers: ["test-client"] }));
    mkdirSync(SOCKET_DIR, { recursive: true });
    policy = await startPolicyServer(["--socket", join(SOCKET_DIR, `${name}.sock`), "--policy", policyFile]);
    d = await startEngined({
      hosts: [`unix://${join(work, "engine.sock")}`, "tcp://127.0.0.1:0"],
      args: ["--tlsverify", "--tlscacert", certs.ca, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey, "--authorization-plugin", name],
    });
    unix = d.addresses().find((a) => a.startsWith("unix://"))!;
    tls = d.addresses().find((a) => a.startsWith("tcp://"))!;
    ok(await docker(unix, ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async function () {
    await d?.stop();
    await policy?.stop();
    await cleanUpPlugins();
  });

  it("allows docker ps and an ordinary docker run", async () => {
    expect(ok(await docker(unix, ["ps"]), "docker ps")).to.match(/^CONTAINER ID\s+IMAGE/);
    expect(ok(await docker(unix, ["run", "--rm", "busybox", "echo", "allowed"]), "docker run")).to.equal("allowed\n");
  });

  it("denies docker run --privileged with the plugin's message", async () => {
    const r = await docker(unix, ["run", "--privileged", "busybox", "true"]);
    expect(r.code).to.equal(125);
    expect(r.stderr).to.include(`Error response from daemon: authorization denied by plugin ${name}: privileged containers are not allowed`);
    expect(policy.output()).to.match(/deny POST \/v1\.\d+\/containers\/create: privileged containers are not allowed/);
  });

  it("denies a bind mount of the host's / given with -v or --mount", async () => {
    for (const args of [["-v", "/:/host"], ["--mount", "type=bind,source=/,target=/host"], ["-v", "/.//:/host:ro"]]) {
      const r = await docker(unix, ["run", ...args, "busybox", "true"]);
      expect(r.code, args.join(" ")).to.equal(125);
      expect(r.stderr).to.include(`authorization denied by plugin ${name}: bind mounts of / are not allowed`);
    }
    const tmp = makeTempDir();
    expect(ok(await docker(unix, ["run", "--rm", "-v", `${tmp}:/host`, "busybox", "echo", "other binds pass"]), "bind of a folder")).to.equal("other binds pass\n");
  });

  it("lets a read-only certificate name look but not change anything", async () => {
    expect(ok(await docker(tls, ["ps", "-a"], tlsEnv()), "docker ps over TLS")).to.match(/^CONTAINER ID/);
    expect(ok(await docker(tls, ["images", "--format", "{{.Repository}}"], tlsEnv()), "docker images over TLS")).to.equal("busybox\n");
    const r = await docker(tls, ["create", "busybox"], tlsEnv());
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include(`authorization denied by plugin ${name}: test-client may only read`);
    expect(policy.output()).to.match(/deny POST \/v1\.\d+\/containers\/create user=test-client: test-client may only read/);
  });
});

describe("the example policy as an in-process plugin, with the Docker CLI", function () {
  let d: TestDaemon;

  before(async function () {
    d = await startEngined({ args: ["--authorization-plugin", join(ROOT, "host/authz-remote/examples/policy/in-process.mjs")] });
  });

  after(async () => d?.stop());

  it("is loaded by path and denies what the server version denies, under the name policy", async () => {
    const host = `unix://${d.socket}`;
    expect((await docker(host, ["ps"])).code).to.equal(0);
    const r = await docker(host, ["run", "--privileged", "busybox", "true"]);
    expect(r.code).to.equal(125);
    expect(r.stderr).to.include("Error response from daemon: authorization denied by plugin policy: privileged containers are not allowed");
    const info = JSON.parse((await docker(host, ["info", "--format", "{{json .Plugins.Authorization}}"])).stdout);
    expect(info).to.deep.equal(["authz.policy"]);
  });
});
