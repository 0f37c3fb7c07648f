/**
 * Back-pressure of engined's streams (host/api/client-stream.ts): a client that stops reading
 * costs the daemon a bounded buffer, not memory that grows with what it is sent; the container
 * goes on (its output goes to the spool and the log driver whatever a reader does), except for
 * attach, where, as Docker's daemon does, the container's output waits for an attached client
 * that does not read; a client that goes away ends the work. Real engined, conmon and runc; the
 * daemon's RSS is read from /proc while the client is stalled. The supervisor's hold (what a
 * stalled attach uses) is checked on its own against a real supervisor.
 */
import "./helpers/root-hooks.js";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { LINE_BYTES, numberedChecker, printNumbered, sizeOf } from "./helpers/numbered-lines.js";
import { daemonPid, eventually, FrameReader, openFds, sampleRss, stalledRequest, upgradedRequest } from "./helpers/stalled-client.js";
import { SupervisorBed } from "./helpers/supervisor-bed.js";

const MiB = 1024 * 1024;

describe("stream back-pressure: clients that do not read", function () {
  this.timeout(600_000);
  let d: TestDaemon;
  let pid: number;
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, `/v1.51${path}`, body);
  const json = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    expect(r.status, `${method} ${path}: ${r.body}`).to.be.below(300);
    return r.body ? JSON.parse(r.body) : undefined;
  };
  const create = async (name: string, cmd: string[], extra: Record<string, unknown> = {}) =>
    (await json("POST", `/containers/create?name=${name}`, { Image: "busybox", Cmd: cmd, ...extra })).Id as string;
  const running = async (id: string) => (await json("GET", `/containers/${id}/json`)).State.Running as boolean;
  /** Lines of the numbered output read from a multiplexed stream, checked as they come. */
  const numberedFrames = () => {
    const check = numberedChecker();
    return { frames: new FrameReader((line) => check.add(line, false)), result: check.result };
  };

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    d = await startEngined();
    pid = daemonPid(d.pidfile);
    const r = await docker(`unix://${d.socket}`, ["import", "--change", 'CMD ["sh"]', writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  after(async () => {
    await d?.stop();
  });

  it("logs --follow of a container printing 100 MB: RSS grows < 64 MiB, the container ends, then every byte comes", async () => {
    const lines = 1_000_000;
    const id = await create("bp-logs", printNumbered(lines, { waitFirst: 1, exitCode: 3 }));
    await api("POST", `/containers/${id}/start`);
    const client = await stalledRequest(d.socket, "GET", `/v1.51/containers/${id}/logs?follow=1&stdout=1&stderr=1`);
    expect(client.status).to.equal(200);
    const before = sampleRss(pid).now();
    const rss = sampleRss(pid);
    // the container ends while its follower reads nothing
    expect(await eventually(async () => !(await running(id)), 300_000), "the container ended").to.equal(true);
    const exit = await json("POST", `/containers/${id}/wait`);
    const peak = rss.stop();
    console.log(`      logs --follow, stalled client: engined RSS ${before} MiB before, at most ${peak} MiB while stalled (+${peak - before})`);
    expect(exit.StatusCode).to.equal(3);
    expect(peak - before).to.be.below(64);

    const { frames, result } = numberedFrames();
    const started = Date.now();
    await client.readAll((c) => frames.push(c), 300_000);
    console.log(`      then read in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(result.errors).to.deep.equal([]);
    expect([result.first, result.last, result.lines]).to.deep.equal([1, lines, lines]);
    expect(frames.stdoutBytes).to.equal(lines * LINE_BYTES);
    await api("DELETE", `/containers/${id}`);
  });

  it("a logs follower that goes away leaves no reader, descriptor or listener behind", async () => {
    const id = await create("bp-gone", ["sh", "-c", "while true; do echo tick; sleep 0.05; done"]);
    await api("POST", `/containers/${id}/start`);
    // a first follower and subscriber, gone again: what the daemon opens once (and keeps) is open then
    for (const path of [`/containers/${id}/logs?follow=1&stdout=1`, "/events"]) (await stalledRequest(d.socket, "GET", `/v1.51${path}`)).destroy();
    await new Promise((r) => setTimeout(r, 1000));
    const fdsBefore = openFds(pid);
    const clients = [];
    for (let i = 0; i < 8; i++) clients.push(await stalledRequest(d.socket, "GET", `/v1.51/containers/${id}/logs?follow=1&stdout=1`));
    for (let i = 0; i < 4; i++) clients.push(await stalledRequest(d.socket, "GET", "/v1.51/events"));
    expect(openFds(pid)).to.be.above(fdsBefore);
    for (const c of clients) c.destroy();
    expect(await eventually(() => openFds(pid) <= fdsBefore, 10_000), `descriptors back to ${fdsBefore} (now ${openFds(pid)})`).to.equal(true);
    await api("DELETE", `/containers/${id}?force=1`);
  });

  it("events: a subscriber that does not read costs a bounded buffer (events past it are dropped for it, as Docker drops them)", async () => {
    // Image events carry the image's labels: with a 16 KiB label, 1,024 tag and untag pairs make
    // 32 MiB of events. (The daemon's history keeps the last 1,024 events, 16 MiB of them.)
    const base = await create("bp-events-base", ["true"]);
    await json("POST", `/commit?container=${base}&repo=bp-big&tag=latest`, { Labels: { big: "x".repeat(16 * 1024) } });
    const tagAndUntag = async (n: number, from: number) => {
      for (let i = from; i < from + n; i++) {
        const r = await api("POST", `/images/bp-big/tag?repo=bp-big&tag=t${i}`);
        expect(r.status, r.body).to.equal(201);
        expect((await api("DELETE", `/images/bp-big:t${i}`)).status).to.equal(200);
      }
    };
    // the same work without a subscriber first: the heap grows to what this work needs anyway
    await tagAndUntag(512, 0);
    const client = await stalledRequest(d.socket, "GET", `/v1.51/events?filters=${encodeURIComponent(JSON.stringify({ type: ["image"] }))}`);
    const before = sampleRss(pid).now();
    const rss = sampleRss(pid);
    const pairs = 1024;
    await tagAndUntag(pairs, 512);
    const peak = rss.stop();
    console.log(`      events, stalled client: engined RSS ${before} MiB before, at most ${peak} MiB after 32 MiB of events (+${peak - before})`);
    expect(peak - before).to.be.below(48);

    // It reads again: what it was given comes whole, then new events as they happen.
    let text = "";
    let sawFinal = false;
    const reading = client
      .readAll((c) => {
        text += c.toString("latin1");
        if (text.includes('"name":"bp-big:final"')) {
          sawFinal = true;
          client.destroy();
        }
      }, 30_000)
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000));
    await json("POST", "/images/bp-big/tag?repo=bp-big&tag=final");
    await reading;
    expect(sawFinal, "the event after the stall came").to.equal(true);
    const received = text.split("\n").filter((l) => l.startsWith("{"));
    for (const line of received) expect(() => JSON.parse(line)).to.not.throw();
    console.log(`      ${received.length - 1} of ${2 * pairs} events reached the stalled subscriber, then the next one`);
    // what its buffers held (engined's 256 KiB and the sockets'), not 32 MiB
    expect(received.length).to.be.below(128);
    await api("DELETE", `/containers/${base}`);
    await api("DELETE", "/images/bp-big:final");
    await api("DELETE", "/images/bp-big:latest?force=1");
  });

  it("exec start: a stalled client of a process printing 50 MB costs a bounded buffer, then gets every byte", async () => {
    const id = await create("bp-exec", ["sleep", "600"]);
    await api("POST", `/containers/${id}/start`);
    const lines = 500_000;
    const exec = await json("POST", `/containers/${id}/exec`, { Cmd: printNumbered(lines), AttachStdout: true, AttachStderr: true });
    const before = sampleRss(pid).now();
    const rss = sampleRss(pid);
    const client = await stalledRequest(d.socket, "POST", `/v1.51/exec/${exec.Id}/start`, { Detach: false, Tty: false });
    expect(client.status).to.equal(200);
    await new Promise((r) => setTimeout(r, 8000));
    const peak = rss.stop();
    console.log(`      exec, stalled client: engined RSS ${before} MiB before, at most ${peak} MiB (+${peak - before})`);
    expect(peak - before).to.be.below(48);
    const { frames, result } = numberedFrames();
    await client.readAll((c) => frames.push(c), 300_000);
    expect(result.errors).to.deep.equal([]);
    expect([result.first, result.last, result.lines]).to.deep.equal([1, lines, lines]);
    expect((await json("GET", `/exec/${exec.Id}/json`)).ExitCode).to.equal(0);
    await api("DELETE", `/containers/${id}?force=1`);
  });

  it("attach: as in Docker, a stalled attached client holds the container's output; it goes on once the client reads", async () => {
    const lines = 300_000; // 30 MB
    const id = await create("bp-attach", printNumbered(lines, { waitFirst: 2, exitCode: 5 }));
    const before = sampleRss(pid).now();
    const rss = sampleRss(pid);
    const client = await stalledRequest(d.socket, "POST", `/v1.51/containers/${id}/attach?stream=1&stdout=1&stderr=1`);
    expect(client.status).to.equal(200);
    await api("POST", `/containers/${id}/start`);
    await new Promise((r) => setTimeout(r, 10_000));
    const held = await running(id);
    const peak = rss.stop();
    console.log(`      attach, stalled client: engined RSS ${before} MiB before, at most ${peak} MiB (+${peak - before}); running after 10 s: ${held}`);
    expect(held, "the container waits for its attached client").to.equal(true);
    expect(peak - before).to.be.below(48);
    const { frames, result } = numberedFrames();
    await client.readAll((c) => frames.push(c), 300_000);
    expect(result.errors).to.deep.equal([]);
    expect([result.first, result.last, result.lines]).to.deep.equal([1, lines, lines]);
    expect((await json("POST", `/containers/${id}/wait`)).StatusCode).to.equal(5);
    await api("DELETE", `/containers/${id}`);
  });

  it("attach stdin: a container that does not read its stdin makes engined stop reading the client (bounded memory)", async () => {
    const id = await create("bp-stdin", ["sleep", "600"], { OpenStdin: true, AttachStdin: true });
    await api("POST", `/containers/${id}/start`);
    const before = sampleRss(pid).now();
    const rss = sampleRss(pid);
    const socket = await upgradedRequest(d.socket, `/v1.51/containers/${id}/attach?stream=1&stdin=1&stdout=1`);
    socket.pause();
    const block = Buffer.alloc(MiB, "y");
    let sent = 0;
    const deadline = Date.now() + 20_000;
    // write until the daemon stops taking it (a write that has not drained in 2 s), 200 MiB at most
    while (sent < 200 * MiB && Date.now() < deadline) {
      if (!socket.write(block)) {
        const drained = await Promise.race([new Promise((r) => socket.once("drain", () => r(true))), new Promise((r) => setTimeout(() => r(false), 2000))]);
        if (!drained) break;
      }
      sent += block.length;
    }
    const peak = rss.stop();
    console.log(`      attach stdin, container not reading: ${sent / MiB} MiB taken from the client; engined RSS ${before} -> at most ${peak} MiB (+${peak - before})`);
    expect(sent).to.be.below(64 * MiB);
    expect(peak - before).to.be.below(48);
    socket.destroy();
    await api("DELETE", `/containers/${id}?force=1`);
  });

  it("attach and exec stdin: 20 MiB sent as fast as the client can reach a reading process whole", async () => {
    const size = 20 * MiB;
    const send = async (socket: Socket) => {
      const block = Buffer.alloc(MiB, "z");
      for (let sent = 0; sent < size; sent += block.length) {
        if (!socket.write(block)) await new Promise((r) => socket.once("drain", r));
      }
      socket.end(); // the client's end of input closes the process's stdin
    };
    const output = (socket: Socket) =>
      new Promise<string>((resolve, reject) => {
        let text = "";
        const frames = new FrameReader((line) => (text += `${line}\n`));
        const timer = setTimeout(() => reject(new Error("no answer within 120 s")), 120_000);
        socket.on("data", (c: Buffer) => frames.push(c));
        socket.once("close", () => {
          clearTimeout(timer);
          resolve(text);
        });
      });

    // a container attached before it starts: what is sent early waits (bounded) for it
    const id = await create("bp-stdin-wc", ["wc", "-c"], { OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true });
    const attach = await upgradedRequest(d.socket, `/v1.51/containers/${id}/attach?stream=1&stdin=1&stdout=1`);
    const attached = output(attach);
    await api("POST", `/containers/${id}/start`);
    await send(attach);
    expect((await attached).trim()).to.equal(String(size));
    expect((await json("POST", `/containers/${id}/wait`)).StatusCode).to.equal(0);
    await api("DELETE", `/containers/${id}`);

    const host = await create("bp-stdin-exec", ["sleep", "600"]);
    await api("POST", `/containers/${host}/start`);
    const exec = await json("POST", `/containers/${host}/exec`, { Cmd: ["wc", "-c"], AttachStdin: true, AttachStdout: true });
    const started = await upgradedRequest(d.socket, `/v1.51/exec/${exec.Id}/start`, { Detach: false, Tty: false });
    const execOutput = output(started);
    await send(started);
    expect((await execOutput).trim()).to.equal(String(size));
    await api("DELETE", `/containers/${host}?force=1`);
  });
});

describe("stream back-pressure: the supervisor's hold of a container's output", function () {
  this.timeout(120_000);
  const bed = new SupervisorBed("hold");
  /** The process state letter of /proc/<pid>/stat: `T` while stopped. */
  const procState = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];
  const held = (pid: number, want: boolean) => eventually(() => (procState(pid) === "T") === want, 5000);

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    await bed.start();
  });
  after(async () => {
    await bed.close();
  });

  it("stops conmon while a hold stands (several may), lets it go when the last one ends, and never outlives a kill", async () => {
    const { id } = await bed.run(["sh", "-c", "i=0; while true; do i=$((i+1)); echo $i; done"]);
    const conmon = (await bed.sup.client.get(id)).conmonPid;
    const first = new AbortController();
    const second = new AbortController();
    await bed.sup.client.hold(id, first.signal);
    await bed.sup.client.hold(id, second.signal);
    expect(await held(conmon, true), "held").to.equal(true);
    // held: once the drain has stored what the spool held, the log stands still
    let size = -1;
    const still = await eventually(async () => {
      const was = sizeOf(bed.jsonLog(id));
      await new Promise((r) => setTimeout(r, 500));
      size = sizeOf(bed.jsonLog(id));
      return size === was;
    }, 15_000);
    expect(still, "the log stands still while held").to.equal(true);
    first.abort();
    await new Promise((r) => setTimeout(r, 500));
    expect(procState(conmon), "one hold still stands").to.equal("T");
    // the connection's end lets it go (engined's end would, too)
    second.abort();
    expect(await held(conmon, false), "let go").to.equal(true);
    expect(await eventually(() => sizeOf(bed.jsonLog(id)) > size, 5000), "the output goes on").to.equal(true);

    // a kill ends every hold: the container's exit is seen at once
    const third = new AbortController();
    await bed.sup.client.hold(id, third.signal);
    expect(await held(conmon, true)).to.equal(true);
    const started = Date.now();
    await bed.sup.client.kill(id, "KILL");
    expect(await bed.sup.client.wait(id)).to.equal(137);
    expect(Date.now() - started).to.be.below(10_000);
    third.abort();
    await bed.remove(id);
  });

  it("refuses a hold of a container that does not run", async () => {
    const { id } = await bed.run(["true"]);
    await bed.sup.client.wait(id);
    const err = await bed.sup.client.hold(id, new AbortController().signal).then(() => undefined, (e: Error & { status?: number }) => e);
    expect(err?.status).to.equal(409);
    await bed.remove(id);
  });
});

