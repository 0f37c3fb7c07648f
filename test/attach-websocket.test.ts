/**
 * `GET /containers/{id}/attach/ws`, Docker's attachment over a WebSocket, through a real
 * WebSocket client (undici's) against a real engined: the container's input from the client's
 * frames and its output in frames, raw (stdout and stderr alike, never multiplexed), binary
 * frames from API 1.28 and text ones before, `logs` replayed, every stream attached before API
 * 1.42 whatever the query asks, the client's close ending the attachment, the plain 400 of a
 * request that is no WebSocket handshake, and Docker's 409 for a paused container (the
 * hijacked attach too, which writes its refusals raw on the connection).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { Agent, WebSocket } from "undici";
import { docker, dockerChecks } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

interface Session {
  /** What came, in order: each frame's payload, `T:` before a text frame's. */
  frames: string[];
  closed: Promise<number>;
  send(data: string): void;
  close(): void;
}

describe("attach over a WebSocket (GET /containers/{id}/attach/ws)", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let host: string;
  const { ok: cli } = dockerChecks(() => host);

  /** A WebSocket to the container's attachment; resolves once it is open. */
  function open(name: string, query: string, version = "1.51"): Promise<Session> {
    const ws = new WebSocket(`ws://localhost/v${version}/containers/${name}/attach/ws?${query}`, { dispatcher: new Agent({ connect: { socketPath: d.socket } }) });
    ws.binaryType = "arraybuffer";
    const frames: string[] = [];
    ws.onmessage = (e) => frames.push(typeof e.data === "string" ? `T:${e.data}` : Buffer.from(e.data as ArrayBuffer).toString());
    const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the WebSocket did not open")), 10_000);
      ws.onopen = () => {
        clearTimeout(timer);
        resolve({ frames, closed, send: (data) => ws.send(Buffer.from(data)), close: () => ws.close() });
      };
      ws.onerror = () => {
        clearTimeout(timer);
        reject(new Error("the WebSocket failed"));
      };
    });
  }

  /** Polls (bounded) until the frames so far, joined, satisfy `ok`. */
  async function until(s: Session, ok: (text: string) => boolean): Promise<string> {
    for (let i = 0; i < 100; i++) {
      const text = s.frames.join("");
      if (ok(text)) return text;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`never came: ${JSON.stringify(s.frames)}`);
  }

  before(async () => {
    const dir = makeTempDir("engine-attach-ws-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
  });
  afterEach(async () => {
    const ids = (await docker(host, ["ps", "-aq"])).stdout.split("\n").filter(Boolean);
    if (ids.length) await docker(host, ["rm", "-f", ...ids]);
  });
  after(async () => d?.stop());

  it("gives the container the client's frames as input and sends its output back in binary frames", async () => {
    await cli("run", "-d", "-i", "--name", "echoer", "busybox", "cat");
    const s = await open("echoer", "stream=1&stdin=1&stdout=1");
    s.send("hello\n");
    expect(await until(s, (t) => t.includes("hello\n"))).to.equal("hello\n");
    expect(s.frames.some((f) => f.startsWith("T:")), "text frames at API 1.51").to.equal(false);
    s.close();
    expect(await s.closed).to.equal(1000);
    // the client's close ends the attachment, not the container
    expect((await cli("inspect", "-f", "{{.State.Running}}", "echoer")).trim()).to.equal("true");
  });

  it("replays the logs and follows, stdout and stderr raw in one stream, and closes when the container ends", async () => {
    await cli("run", "-d", "--name", "talker", "busybox", "sh", "-c", "echo one; echo two >&2; sleep 1; echo three");
    const s = await open("talker", "logs=1&stream=1&stdout=1&stderr=1");
    expect(await s.closed).to.equal(1000);
    expect(s.frames.join("").split("\n").sort()).to.deep.equal(["", "one", "three", "two"]);
    // only what was asked for from API 1.42
    const out = await open("talker", "logs=1&stdout=1");
    await out.closed;
    expect(out.frames.join("")).to.equal("one\nthree\n");
  });

  it("attaches every stream before API 1.42, in text frames before API 1.28", async () => {
    await cli("run", "-d", "--name", "older", "busybox", "sh", "-c", "echo out; echo err >&2");
    await cli("wait", "older");
    const all = await open("older", "logs=1&stdout=1", "1.41");
    await all.closed;
    expect(all.frames.join("").split("\n").sort()).to.deep.equal(["", "err", "out"]);
    const text = await open("older", "logs=1", "1.27");
    await text.closed;
    expect(text.frames.length).to.be.greaterThan(0);
    expect(text.frames.every((f) => f.startsWith("T:"))).to.equal(true);
  });

  it("answers a request that is no WebSocket handshake with the plain 400 of Docker's websocket library, after the container is found", async () => {
    await cli("run", "-d", "--name", "plain", "busybox", "sleep", "30");
    const r = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/containers/plain/attach/ws?stream=1");
    expect([r.status, r.body]).to.deep.equal([400, "not websocket protocol"]);
    const missing = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/containers/nosuch/attach/ws");
    expect(missing.status).to.equal(404);
  });

  it("refuses to attach to a paused container with Docker's 409, named as the client named it", async () => {
    await cli("run", "-d", "--name", "frozen", "busybox", "sleep", "30");
    await cli("pause", "frozen");
    // the hijacked attach answers its refusals raw, as Docker's daemon writes them on the connection it took
    const r = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/frozen/attach?stream=1&stdout=1");
    expect([r.status, r.headers["content-type"], r.body]).to.deep.equal([409, "application/vnd.docker.raw-stream", "container frozen is paused, unpause the container before attach\r\n"]);
    const ws = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/containers/frozen/attach/ws?stream=1");
    expect(ws.status).to.equal(409);
    await cli("unpause", "frozen");
  });
});
