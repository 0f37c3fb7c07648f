/**
 * What dockerode's own test suite expects of a daemon, where engined answered otherwise than
 * Docker's: stdin through an attach that is not upgraded (dockerode sends its options as a JSON
 * body, then stdin on the same connection), the output of attach and exec one frame per read of
 * the process's pipe (not one per line), and the files of a container that never ran (Docker's
 * init layer: `/etc/resolv.conf`, `/etc/hosts`, `/etc/hostname`, `/.dockerenv`).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import { busyboxDaemonHooks } from "./helpers/dockerode-daemon.js";
import tarStream from "tar-stream";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything a stream gives until it ends (or `ms` pass). */
function collect(stream: NodeJS.ReadableStream, ms = 10_000): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks));
    stream.on("data", (d: Buffer) => chunks.push(d));
    stream.once("end", done);
    stream.once("close", done);
    setTimeout(done, ms);
  });
}

/** Docker's multiplexed stream as [stream, text] frames. */
function frames(buf: Buffer): [number, string][] {
  const out: [number, string][] = [];
  for (let at = 0; at + 8 <= buf.length; ) {
    const len = buf.readUInt32BE(at + 4);
    out.push([buf[at], buf.subarray(at + 8, at + 8 + len).toString()]);
    at += 8 + len;
  }
  return out;
}

/** The names in a tar. */
async function tarNames(tar: NodeJS.ReadableStream): Promise<string[]> {
  const names: string[] = [];
  const extract = tarStream.extract();
  extract.on("entry", (header, body, next) => {
    names.push(header.name);
    body.resume();
    body.once("end", next);
  });
  const done = new Promise<void>((resolve, reject) => extract.once("finish", () => resolve()).once("error", reject));
  tar.pipe(extract);
  await done;
  return names;
}

describe("dockerode's suite: attach stdin, frames per read, a new container's files", function () {
  this.timeout(60_000);

  const ctx = busyboxDaemonHooks();

  it("attach with stdin, not upgraded: what the client writes after the request is the container's stdin (TTY)", async function () {
    const c = await ctx.client.createContainer({ Image: "busybox", Tty: true, OpenStdin: true, AttachStdin: true, AttachStdout: true, Cmd: ["wc", "-c"] });
    const stream = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true })) as unknown as Duplex;
    const output = collect(stream);
    await c.start();
    stream.write("abcdefghij\n\x04");
    const result = await Promise.race([c.wait(), sleep(15_000).then(() => "no exit")]);
    expect(result, "wc read its input to the end").to.deep.equal({ StatusCode: 0, Error: null });
    const text = (await output).toString();
    expect(text).to.match(/abcdefghij\r\n\s*11\r\n$/);
  });

  it("attach with stdin, not upgraded, without a TTY: the shell runs what it is sent, its output comes back", async function () {
    const c = await ctx.client.createContainer({ Image: "busybox", OpenStdin: true, AttachStdout: true, AttachStderr: true, Cmd: ["sh"] });
    const stream = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true })) as unknown as Duplex;
    const out = new PassThrough();
    let stdout = "";
    out.on("data", (b: Buffer) => (stdout += b.toString()));
    c.modem.demuxStream(stream, out, new PassThrough());
    await c.start();
    stream.write("echo from-stdin; exit 3\n");
    const result = await Promise.race([c.wait(), sleep(15_000).then(() => "no exit")]);
    expect(result, "the shell read its input").to.deep.equal({ StatusCode: 3, Error: null });
    await sleep(200);
    expect(stdout).to.equal("from-stdin\n");
  });

  it("exec start hijacked: what cat reads at once comes back as one frame", async function () {
    const c = await ctx.client.createContainer({ Image: "busybox", Cmd: ["sleep", "60"] });
    await c.start();
    const exec = await c.exec({ Cmd: ["cat"], AttachStdin: true, AttachStdout: true });
    const socket = (await exec.start({ hijack: true, stdin: true })) as unknown as Socket;
    const output = collect(socket);
    const sample = "echo\nall\nof\nme\n";
    socket.end(sample);
    expect(frames(await output)).to.deep.equal([[1, sample]]);
  });

  it("attach: the lines of one write of the container come as one frame, as Docker copies its pipe", async function () {
    const c = await ctx.client.createContainer({ Image: "busybox", AttachStdout: true, Cmd: ["printf", "a\\nb\\nc\\n"] });
    const stream = await c.attach({ stream: true, stdout: true, stderr: true });
    const output = collect(stream);
    await c.start();
    await c.wait();
    expect(frames(await output)).to.deep.equal([[1, "a\nb\nc\n"]]);
  });

  it("a container that never ran has Docker's init layer files: cp and export show them, diff does not", async function () {
    const c = await ctx.client.createContainer({ Image: "busybox", Cmd: ["true"] });
    for (const path of ["/etc/resolv.conf", "/etc/hosts", "/etc/hostname", "/.dockerenv"]) {
      const info = await c.infoArchive({ path }).catch((e: Error) => e);
      expect(info, `${path} found`).to.not.be.instanceOf(Error);
    }
    const names = await tarNames((await c.getArchive({ path: "/etc" })) as unknown as NodeJS.ReadableStream);
    expect(names).to.include.members(["etc/resolv.conf", "etc/hosts", "etc/hostname", "etc/mtab"]);
    const exported = await tarNames((await c.export()) as unknown as NodeJS.ReadableStream);
    expect(exported).to.include.members([".dockerenv", "etc/resolv.conf", "etc/hosts", "etc/hostname"]);
    // no change: `null` and a newline (dockerd's bytes), which dockerode gives as they are
    const changes: unknown = await c.changes();
    expect(Buffer.isBuffer(changes) ? changes.toString() : changes).to.equal("null\n");
  });
});
