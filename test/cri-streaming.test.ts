/**
 * The CRI streaming server (Exec, Attach, PortForward) driven by the real kubectl (client-go
 * v1.32) through an API server stand-in that passes the upgrade through to the URL the CRI call
 * answered (helpers/kube-api-stub.ts), over WebSocket (kubectl's default) and over SPDY/3.1
 * (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false): exec with and without a terminal, stdin, exit
 * codes, resize; tokens single-use; the requests' checks.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { grpc } from "./helpers/cri-client.js";
import { podConfig, useCriBed } from "./helpers/cri-pods.js";
import { startKubeStub, type KubeStub } from "./helpers/kubectl.js";

const SPDY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: "false" };
const WEBSOCKET = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: "true" };

describe("CRI: streaming server (exec, attach, port-forward) with kubectl", function () {
  this.timeout(180_000);
  const bed = useCriBed();
  const rt = (method: string, req: object = {}) => bed.current().cri.call("runtime", method, req);
  let stub: KubeStub;
  let podId: string;
  let sleeper: string;

  const container = (name: string, args: string[], extra: Record<string, unknown> = {}) => ({
    metadata: { name, attempt: 0 },
    image: { image: "busybox" },
    command: ["sh", "-c"],
    args,
    ...extra,
  });

  async function startContainer(config: object): Promise<string> {
    const { containerId } = await rt("CreateContainer", { podSandboxId: podId, config, sandboxConfig: podConfig() });
    await rt("StartContainer", { containerId });
    return containerId;
  }

  /** Exec's URL for `cmd`, handed to the stub for kubectl's next request. */
  async function execUrl(cmd: string[], flags: Record<string, boolean>): Promise<string> {
    const { url } = await rt("Exec", { containerId: sleeper, cmd, stdout: true, ...flags });
    stub.target(url);
    return url;
  }

  before(async function () {
    podId = (await rt("RunPodSandbox", { config: podConfig() })).podSandboxId;
    sleeper = await startContainer(container("sleeper", ["sleep 3600"]));
    await startContainer(container("web", ["mkdir -p /www && echo hello-from-pod > /www/index.html && exec httpd -f -p 8080 -h /www"]));
    stub = await startKubeStub(bed.current().ns.file);
  });

  after(async function () {
    await stub?.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(`--- API stub log:\n${stub?.log()}`);
  });

  for (const [name, env] of [["WebSocket", WEBSOCKET], ["SPDY", SPDY]] as const) {
    describe(`over ${name}`, function () {
      it("exec: output, stdin piped and closed, stderr apart", async function () {
        await execUrl(["sh", "-c", "cat; echo err >&2"], { stdin: true, stderr: true });
        const r = await stub.kubectl(["exec", "-i", "pod-x", "--", "sh", "-c", "cat; echo err >&2"], { input: "hello\nworld\n", env });
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.equal("hello\nworld\n");
        expect(r.stderr).to.equal("err\n");
      });

      it("exec: the exit code reaches kubectl", async function () {
        await execUrl(["sh", "-c", "echo out; exit 3"], { stderr: true });
        const r = await stub.kubectl(["exec", "pod-x", "--", "sh", "-c", "echo out; exit 3"], { env });
        expect(r.stdout).to.equal("out\n");
        expect(r.stderr).to.contain("command terminated with exit code 3");
        expect(r.code).to.equal(3);
      });

      it("exec with a terminal: the size kubectl's terminal has, input and output on it", async function () {
        await execUrl(["sh", "-c", "stty size; read line; echo got:$line"], { stdin: true, tty: true });
        const r = await stub.kubectl(["exec", "-it", "pod-x", "--", "sh", "-c", "stty size; read line; echo got:$line"], {
          env, tty: { rows: 33, cols: 101 }, input: "typed\n",
        });
        expect(r.code, r.stdout + r.stderr).to.equal(0);
        expect(r.stdout, JSON.stringify(r.stdout)).to.contain("33 101");
        expect(r.stdout).to.contain("got:typed");
      });
    });
  }

  for (const [name, env] of [["WebSocket", WEBSOCKET], ["SPDY", SPDY]] as const) {
    it(`attach over ${name}: input to a stdin container, its output back, the end when it exits`, async function () {
      const id = await startContainer(container(`reader-${name.toLowerCase()}`, ['while read l; do echo got:$l; [ "$l" = quit ] && exit 0; done'], { stdin: true }));
      const { url } = await rt("Attach", { containerId: id, stdin: true, stdout: true, stderr: true });
      stub.target(url);
      const r = await stub.kubectl(["attach", "-i", "pod-x", "-c", "c"], { input: "hello\nquit\n", env });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal("got:hello\ngot:quit\n");
    });
  }

  for (const [name, env] of [["WebSocket (SPDY tunneled, kubectl's default)", { KUBECTL_PORT_FORWARD_WEBSOCKETS: "true" }], ["SPDY", { KUBECTL_PORT_FORWARD_WEBSOCKETS: "false" }]] as const) {
    it(`port-forward over ${name}: a server in the pod reached through kubectl, twice; a closed port's error`, async function () {
      const ns = bed.current().ns;
      const forwarded = async (podPort: number) => {
        const { url } = await rt("PortForward", { podSandboxId: podId, port: [podPort] });
        stub.target(url);
        const pf = stub.spawnKubectl(["port-forward", "pod-x", `:${podPort}`], env);
        for (let i = 0; i < 100; i++) {
          const m = new RegExp(`127\\.0\\.0\\.1:(\\d+) -> ${podPort}`).exec(pf.output());
          if (m) return { pf, port: Number(m[1]) };
          await sleep(100);
        }
        pf.child.kill("SIGKILL");
        throw new Error(`kubectl port-forward did not start: ${pf.output()}`);
      };
      const web = await forwarded(8080);
      try {
        for (let i = 0; i < 2; i++) expect(ns.run("curl", "-s", "--max-time", "10", `http://127.0.0.1:${web.port}/`)).to.equal("hello-from-pod\n");
      } finally {
        web.pf.child.kill("SIGKILL");
      }
      const closed = await forwarded(9);
      try {
        expect(ns.status("curl", "-s", "--max-time", "10", `http://127.0.0.1:${closed.port}/`)).to.not.equal(0);
        for (let i = 0; i < 50 && !/connection refused/.test(closed.pf.output()); i++) await sleep(100);
        expect(closed.pf.output()).to.match(/error forwarding port 9 to pod .*connection refused/);
      } finally {
        closed.pf.child.kill("SIGKILL");
      }
      if (name.startsWith("WebSocket")) expect(stub.log()).to.match(/portforward \(upgrade: websocket, protocols: SPDY\/3\.1\+portforward\.k8s\.io\)/).and.not.match(/POST .*portforward/);
    });
  }

  for (const [name, env] of [["WebSocket", WEBSOCKET], ["SPDY", SPDY]] as const) {
    it(`a client that goes away takes its exec's process with it (${name})`, async function () {
      await execUrl(["sh", "-c", "echo started; exec sleep 4321"], {});
      const k = stub.spawnKubectl(["exec", "pod-x", "--", "sh", "-c", "echo started; exec sleep 4321"], env);
      const running = async () => (await rt("ExecSync", { containerId: sleeper, cmd: ["ps", "-o", "args"], timeout: 10 })).stdout.toString().includes("sleep 4321");
      try {
        for (let i = 0; i < 100 && !k.output().includes("started"); i++) await sleep(100);
        expect(k.output()).to.contain("started");
        expect(await running()).to.equal(true);
      } finally {
        k.child.kill("SIGKILL");
      }
      for (let i = 0; i < 50 && (await running()); i++) await sleep(100);
      expect(await running()).to.equal(false);
    });
  }

  /** The WebSocket probe's lines (helpers/ws-probe.ts), run in the bed's namespace. */
  function probe(url: string, protocol: string, messages: object[] = []): Record<string, any>[] {
    const script = fileURLToPath(new URL("./helpers/ws-probe.js", import.meta.url));
    const out = bed.current().ns.run(process.execPath, script, url, protocol, JSON.stringify(messages));
    return out.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  }

  it("exec over base64.channel.k8s.io (a digit and base64 per text message, the status as text); an unknown protocol is 403", async function () {
    const cmd = ["sh", "-c", "echo hi; echo oops >&2; exit 2"];
    const { url } = await rt("Exec", { containerId: sleeper, cmd, stdout: true, stderr: true });
    const got = probe(url, "base64.channel.k8s.io");
    const texts = got.filter((m) => m.text !== undefined).map((m) => [m.text[0], Buffer.from(m.text.slice(1), "base64").toString()]);
    expect(texts[0]).to.deep.equal(["1", ""]);
    expect(texts.filter((t) => t[0] === "1").map((t) => t[1]).join("")).to.equal("hi\n");
    expect(texts.filter((t) => t[0] === "2").map((t) => t[1]).join("")).to.equal("oops\n");
    expect(texts.find((t) => t[0] === "3")?.[1]).to.match(/command terminated with non-zero exit code: .*exit code 2/);
    expect(got.at(-1)).to.deep.equal({ close: 1000 });
    const again = await rt("Exec", { containerId: sleeper, cmd: ["true"], stdout: true });
    expect(probe(again.url, "no.such.protocol")).to.deep.equal([{ status: 403 }]);
  });

  it("exec with a terminal over WebSocket (v5.channel.k8s.io): sizes sent on channel 4 mid-session change what `stty size` sees", async function () {
    const script = "i=0; while [ $i -lt 150 ]; do stty size; sleep 0.1; i=$((i+1)); done";
    const { url } = await rt("Exec", { containerId: sleeper, cmd: ["sh", "-c", script], stdin: true, stdout: true, tty: true });
    const resize = (width: number, height: number) => ({ hex: Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: width, Height: height }))]).toString("hex") });
    const got = probe(url, "v5.channel.k8s.io", [resize(80, 24), { waitFor: "24 80" }, resize(100, 30), { waitFor: "30 100" }, resize(132, 43), { waitFor: "43 132" }, { close: true }]);
    expect(got.find((m) => m.timeout)).to.equal(undefined);
    const sizes = got
      .filter((m) => m.hex?.startsWith("01"))
      .map((m) => Buffer.from(m.hex.slice(2), "hex").toString())
      .join("")
      .split(/\r?\n/)
      .filter(Boolean);
    // the first size the process saw is the first one sent; then each one sent, in order
    const distinct = sizes.filter((v, i) => v !== sizes[i - 1]);
    expect(distinct).to.deep.equal(["24 80", "30 100", "43 132"]);
  });

  it("port-forward over the kubelet's WebSocket channels (v4.channel.k8s.io): the port first on both channels, then the pod's answer", async function () {
    const { url } = await rt("PortForward", { podSandboxId: podId, port: [8080] });
    const request = Buffer.concat([Buffer.from([0]), Buffer.from("GET / HTTP/1.0\r\n\r\n")]).toString("hex");
    const got = probe(url, "v4.channel.k8s.io", [{ hex: request }]);
    const frames = got.filter((m) => m.hex !== undefined).map((m) => Buffer.from(m.hex, "hex"));
    expect(frames.slice(0, 2).map((f) => f.toString("hex"))).to.have.members(["00901f", "01901f"]);
    const data = Buffer.concat(frames.slice(2).filter((f) => f[0] === 0).map((f) => f.subarray(1))).toString();
    expect(data).to.match(/^HTTP\/1\.[01] 200/);
    expect(data).to.contain("hello-from-pod");
    expect(got.at(-1)).to.deep.equal({ close: 1000 });
  });

  it("a token is single-use: its URL a second time is 404; a request without an upgrade is 400", async function () {
    const url = await execUrl(["true"], {});
    const first = await stub.kubectl(["exec", "pod-x", "--", "true"], { env: WEBSOCKET });
    expect(first.code, first.stderr).to.equal(0);
    const second = await stub.kubectl(["exec", "pod-x", "--", "true"], { env: WEBSOCKET });
    expect(second.code).to.not.equal(0);
    // the same straight from inside the namespace: a plain request is 404 too
    const status = bed.current().ns.run("sh", "-c", `curl -s -o /dev/null -w "%{http_code}" ${url} || true`);
    expect(status).to.match(/404/);
    const fresh = await execUrl(["true"], {});
    expect(bed.current().ns.run("sh", "-c", `curl -s -o /dev/null -w "%{http_code}" ${fresh} || true`)).to.equal("400");
  });

  it("requests are checked: unknown container, tty with stderr, no stream, ports out of range", async function () {
    const cri = bed.current().cri;
    expect((await cri.fails("runtime", "Exec", { containerId: "nope", cmd: ["true"], stdout: true })).code).to.equal(grpc.status.NOT_FOUND);
    expect((await cri.fails("runtime", "Exec", { containerId: sleeper, cmd: ["true"], tty: true, stderr: true, stdout: true })).code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((await cri.fails("runtime", "Exec", { containerId: sleeper, cmd: ["true"] })).code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((await cri.fails("runtime", "Exec", { containerId: sleeper, cmd: [], stdout: true })).code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((await cri.fails("runtime", "Attach", { containerId: "nope", stdout: true })).code).to.equal(grpc.status.NOT_FOUND);
    expect((await cri.fails("runtime", "PortForward", { podSandboxId: podId, port: [0] })).code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((await cri.fails("runtime", "PortForward", { podSandboxId: podId, port: [70000] })).code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((await cri.fails("runtime", "PortForward", { podSandboxId: "nope", port: [80] })).code).to.equal(grpc.status.NOT_FOUND);
    const stopped = await startContainer(container("quick", ["true"]));
    for (let i = 0; i < 100 && (await rt("ContainerStatus", { containerId: stopped })).status.state !== "CONTAINER_EXITED"; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await cri.fails("runtime", "Exec", { containerId: stopped, cmd: ["true"], stdout: true })).code).to.equal(grpc.status.FAILED_PRECONDITION);
  });

});
