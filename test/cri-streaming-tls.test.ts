/**
 * The CRI streaming server over TLS (`--cri-stream-tls-cert`, `--cri-stream-tls-key`, as
 * containerd's `enable_tls_streaming`): Exec's URL is https://; the real kubectl reaches it
 * through the API server stand-in, which verifies the certificate as the kubelet's proxy does;
 * a client that does not trust the CA gets no session, a plain HTTP request no answer. A
 * certificate without its key is a configuration error, and a key that is not the
 * certificate's stops the daemon at start.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { join } from "node:path";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { podConfig, startCriBed, useCriBed } from "./helpers/cri-pods.js";
import { makeTempDir, runEngined } from "./helpers/engined.js";
import { startKubeStub, type KubeStub } from "./helpers/kubectl.js";

describe("CRI: the streaming server over TLS", function () {
  this.timeout(180_000);
  let certs: CertSet;
  const bed = useCriBed(() => {
    certs = makeCerts(makeTempDir("engine-cri-tls-"));
    return ["--cri-stream-tls-cert", certs.serverCert, "--cri-stream-tls-key", certs.serverKey];
  });
  const rt = (method: string, req: object = {}) => bed.current().cri.call("runtime", method, req);
  let stub: KubeStub;
  let sleeper: string;

  before(async function () {
    const podSandboxId = (await rt("RunPodSandbox", { config: podConfig() })).podSandboxId;
    const config = { metadata: { name: "sleeper", attempt: 0 }, image: { image: "busybox" }, command: ["sleep", "3600"] };
    sleeper = (await rt("CreateContainer", { podSandboxId, config, sandboxConfig: podConfig() })).containerId;
    await rt("StartContainer", { containerId: sleeper });
    stub = await startKubeStub(bed.current().ns.file, certs.ca);
  });
  after(async function () {
    await stub?.stop();
  });

  /** curl in the bed's namespace: the HTTP status, or curl's own exit code when there was no answer. */
  const curl = (url: string, ...args: string[]) => bed.current().ns.run("sh", "-c", `curl -s -o /dev/null -w "%{http_code}" ${args.join(" ")} ${url}; echo " $?"`).trim();

  it("Exec answers an https:// URL; kubectl exec through a proxy that verifies the certificate runs the command", async function () {
    const { url } = await rt("Exec", { containerId: sleeper, cmd: ["sh", "-c", "echo over-tls; exit 4"], stdout: true, stderr: true });
    expect(url).to.match(/^https:\/\/127\.0\.0\.1:\d+\/exec\//);
    stub.target(url);
    const r = await stub.kubectl(["exec", "pod-x", "--", "sh", "-c", "echo over-tls; exit 4"], { env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: "true" } });
    expect(r.stdout, r.stderr + stub.log()).to.equal("over-tls\n");
    expect(r.code).to.equal(4);
  });

  it("a client that does not trust the CA gets no session; with the CA, a request without an upgrade is 400; plain HTTP gets no HTTP answer", async function () {
    const { url } = await rt("Exec", { containerId: sleeper, cmd: ["true"], stdout: true });
    // curl 60: the peer's certificate cannot be verified
    expect(curl(url)).to.equal("000 60");
    const fresh = await rt("Exec", { containerId: sleeper, cmd: ["true"], stdout: true });
    expect(curl(fresh.url, "--cacert", certs.ca)).to.equal("400 0");
    const plain = await rt("Exec", { containerId: sleeper, cmd: ["true"], stdout: true });
    // curl 52: the server closed the connection without an answer
    expect(curl(plain.url.replace(/^https:/, "http:"))).to.equal("000 52");
  });

  it("a certificate without its key is refused by --validate; a key that is not the certificate's stops the start, naming both files", async function () {
    const alone = await runEngined(["--validate", "--cri-supervisor", "--cri-stream-tls-cert", certs.serverCert]);
    expect(alone.code).to.not.equal(0);
    expect(alone.stderr).to.contain("cri-stream-tls-cert and cri-stream-tls-key must be given together");
    const wrongKey = join(certs.dir, "rogue-ca-key.pem");
    const started = await startCriBed(["--cri-stream-tls-cert", certs.serverCert, "--cri-stream-tls-key", wrongKey]).then(
      async (other) => {
        await other.stop();
        return "started";
      },
      (err: Error) => err.message,
    );
    expect(started).to.contain(`the TLS certificate ${certs.serverCert} with key ${wrongKey} cannot be used`);
  });
});
