/**
 * The context of `POST /build` (host/build/context): tars in every compression, the Dockerfile
 * and .dockerignore found as Docker's daemon finds them, remote tars and Dockerfiles from an
 * HTTP server on loopback, git repositories over file:// and git's dumb HTTP protocol on
 * loopback, and every bad input with the error and status the client gets. The expected
 * messages were checked against dockerd 20.10 (its statuses are 500 where these are 4xx).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { once } from "node:events";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { EngineError } from "../core/errors.js";
import { openBuildContext, type BuildContext, type BuildContextRequest } from "../host/build/context/index.js";
import { detectContentType } from "../host/build/context/content-sniff.js";
import { cloneGitContext, parseGitRemote } from "../host/build/context/git-clone.js";
import { makeTar, type TarEntry } from "./fixtures/layers.js";
import { makeTempDir } from "./helpers/engined.js";
import { gitFixtures, serveStatic, type GitFixtures } from "./fixtures/build-context-git.js";

const DOCKERFILE = "FROM scratch\nCOPY . /\n";
/** An entry no context may hold (a hard link to nothing), and the 400's message about it. */
const BAD_ENTRY: TarEntry = { name: "evil", type: "link", linkname: "missing" };
const BAD_ENTRY_MESSAGE = 'invalid build context: entry "evil": hard link target "missing" is not in the build context';

const ctxEntries = (): TarEntry[] => [
  { name: "Dockerfile", data: DOCKERFILE },
  { name: ".dockerignore", data: "*.log\n" },
  { name: "app/", type: "directory", mode: 0o750, uid: 1234, gid: 5678 },
  { name: "app/main.sh", data: "echo hi\n", mode: 0o755, uid: 1234, gid: 5678 },
  { name: "app/link", type: "symlink", linkname: "main.sh" },
  { name: "sub/Dockerfile.dev", data: "FROM scratch\n" },
];

/** A fresh private work folder for one build. */
function workDir(): string {
  const dir = join(makeTempDir("engine-build-context-"), "work");
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** A request as the tests write it: the body may be a Buffer, and the work folder is made when missing. */
type TestRequest = Omit<Partial<BuildContextRequest>, "body"> & { body?: Readable | Buffer };

async function open(req: TestRequest): Promise<BuildContext> {
  const body = Buffer.isBuffer(req.body) ? Readable.from([req.body]) : req.body;
  return openBuildContext({ workDir: req.workDir ?? workDir(), disablePigz: false, ...req, body });
}

/** The EngineError `open` fails with; the work folder is left empty. */
async function failure(req: TestRequest): Promise<EngineError> {
  const dir = req.workDir ?? workDir();
  try {
    await open({ ...req, workDir: dir });
  } catch (e) {
    expect(readdirSync(dir), "left in the work folder").to.deep.equal([]);
    expect(e).to.be.instanceOf(EngineError, String(e));
    return e as EngineError;
  }
  throw new Error("the context was accepted");
}

function compress(tool: "bzip2" | "xz", data: Buffer): Buffer {
  return execFileSync(tool, ["-c"], { input: data, maxBuffer: 64 * 1024 * 1024 });
}

function expectUnpacked(ctx: BuildContext): void {
  expect(ctx.dockerfileText).to.equal(DOCKERFILE);
  expect(ctx.dockerfilePath).to.equal("Dockerfile");
  expect(ctx.dockerignore).to.equal("*.log\n");
  expect(readFileSync(join(ctx.root, "app/main.sh"), "utf8")).to.equal("echo hi\n");
  const st = lstatSync(join(ctx.root, "app/main.sh"));
  expect([st.uid, st.gid, st.mode & 0o7777]).to.deep.equal([1234, 5678, 0o755]);
  expect(lstatSync(join(ctx.root, "app")).mode & 0o7777).to.equal(0o750);
  expect(readlinkSync(join(ctx.root, "app/link"))).to.equal("main.sh");
}

describe("build context: the request's body", () => {
  let tar: Buffer;
  before(async () => {
    tar = await makeTar(ctxEntries());
  });

  for (const [name, pack] of [
    ["plain", (t: Buffer) => t],
    ["gzip", (t: Buffer) => gzipSync(t)],
    ["bzip2", (t: Buffer) => compress("bzip2", t)],
    ["xz", (t: Buffer) => compress("xz", t)],
    ["zstd", (t: Buffer) => zstdCompressSync(t)],
  ] as const) {
    it(`unpacks a ${name} tar with its owners, modes and symlinks, and reads Dockerfile and .dockerignore`, async () => {
      const ctx = await open({ body: pack(tar) });
      expect(ctx.source).to.equal("archive");
      expectUnpacked(ctx);
      await ctx.cleanup();
      expect(existsSync(ctx.root)).to.equal(false);
      await ctx.cleanup(); // twice is fine
    });
  }

  it("takes the dockerfile parameter as a path inside the context, through symlinks kept inside", async () => {
    const ctx = await open({ body: tar, dockerfile: "sub/Dockerfile.dev" });
    expect([ctx.dockerfilePath, ctx.dockerfileText]).to.deep.equal(["sub/Dockerfile.dev", "FROM scratch\n"]);
    const linked = await makeTar([{ name: "real/df", data: "FROM a\n" }, { name: "Dockerfile", type: "symlink", linkname: "/real/df" }, { name: "up", type: "symlink", linkname: "../../../real/df" }]);
    expect((await open({ body: linked })).dockerfileText).to.equal("FROM a\n");
    expect((await open({ body: linked, dockerfile: "up" })).dockerfileText).to.equal("FROM a\n"); // `..` stops at the root
    expect((await open({ body: linked, dockerfile: "/real/../real/df" })).dockerfileText).to.equal("FROM a\n");
  });

  it("falls back to `dockerfile` only when the default Dockerfile is missing", async () => {
    const lower = await makeTar([{ name: "dockerfile", data: "FROM lower\n" }]);
    const ctx = await open({ body: lower });
    expect([ctx.dockerfilePath, ctx.dockerfileText, ctx.dockerignore]).to.deep.equal(["dockerfile", "FROM lower\n", undefined]);
    expect((await failure({ body: lower, dockerfile: "./Dockerfile" })).message).to.equal("Cannot locate specified Dockerfile: ./Dockerfile");
  });

  it("keeps .wh. names as ordinary files and leaves fifos and devices out", async () => {
    const ctx = await open({
      body: await makeTar([
        { name: "Dockerfile", data: DOCKERFILE },
        { name: "d/.wh.x", data: "not a whiteout" },
        { name: "d/x", data: "x" },
        { name: "d/.wh..wh..opq", data: "" },
        { name: "fifo", type: "fifo" },
        { name: "null", type: "character-device", devmajor: 1, devminor: 3 },
      ]),
    });
    expect(readFileSync(join(ctx.root, "d/.wh.x"), "utf8")).to.equal("not a whiteout");
    expect(readdirSync(join(ctx.root, "d")).sort()).to.deep.equal([".wh..wh..opq", ".wh.x", "x"]);
    expect(existsSync(join(ctx.root, "fifo")) || existsSync(join(ctx.root, "null"))).to.equal(false);
  });

  it("keeps absolute names, symlinked parents and `..` that climbs out inside the context, as Docker's chroot does", async () => {
    const outside = makeTempDir("engine-build-context-outside-");
    const ctx = await open({
      body: await makeTar([
        { name: "Dockerfile", data: DOCKERFILE },
        { name: "/abs/evil", data: "a" },
        { name: "out", type: "symlink", linkname: outside },
        { name: "out/evil", data: "b" },
      ]),
    });
    expect(readFileSync(join(ctx.root, "abs/evil"), "utf8")).to.equal("a");
    expect(readFileSync(join(ctx.root, outside, "evil"), "utf8")).to.equal("b");
    expect(readdirSync(outside)).to.deep.equal([]);
    const climbed = await open({ body: await makeTar([{ name: "Dockerfile", data: DOCKERFILE }, { name: "../evil", data: "c" }, { name: "sub/../../../up", data: "d" }]) });
    expect([readFileSync(join(climbed.root, "evil"), "utf8"), readFileSync(join(climbed.root, "up"), "utf8")]).to.deep.equal(["c", "d"]);
    const err = await failure({ body: await makeTar([{ name: "Dockerfile", data: DOCKERFILE }, BAD_ENTRY]) });
    expect([err.statusCode, err.code, err.message]).to.deep.equal([400, "ENGINE_ERR_CONTEXT_INVALID_ENTRY", BAD_ENTRY_MESSAGE]);
  });

  it("answers bad bodies with 400s that say what is wrong", async () => {
    const cases: [Buffer | undefined, string, RegExp | string][] = [
      [Buffer.from(DOCKERFILE), "ENGINE_ERR_CONTEXT_NOT_ARCHIVE", /^the build context is not a tar archive .*: Unexpected end of data$/],
      [Buffer.from(`${DOCKERFILE}# ${"x".repeat(600)}\n`), "ENGINE_ERR_CONTEXT_NOT_ARCHIVE", /^the build context is not a tar archive .*Invalid tar header/],
      [Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), "ENGINE_ERR_CONTEXT_CORRUPT", /^the build context could not be decompressed: /],
      [gzipSync(tar).subarray(0, 100), "ENGINE_ERR_CONTEXT_CORRUPT", /^the build context could not be decompressed: /],
      [await makeTar([{ name: "a", data: "a" }]), "ENGINE_ERR_CONTEXT_DOCKERFILE_NOT_FOUND", "Cannot locate specified Dockerfile: Dockerfile"],
      [Buffer.alloc(0), "ENGINE_ERR_CONTEXT_DOCKERFILE_NOT_FOUND", "Cannot locate specified Dockerfile: Dockerfile"],
      [undefined, "ENGINE_ERR_CONTEXT_DOCKERFILE_NOT_FOUND", "Cannot locate specified Dockerfile: Dockerfile"],
      [await makeTar([{ name: "Dockerfile", data: "" }]), "ENGINE_ERR_CONTEXT_DOCKERFILE_EMPTY", "the Dockerfile (Dockerfile) cannot be empty"],
      [await makeTar([{ name: "Dockerfile/", type: "directory" }]), "ENGINE_ERR_CONTEXT_FILE_UNREADABLE", "unexpected error reading Dockerfile: read Dockerfile: is a directory"],
    ];
    for (const [body, code, message] of cases) {
      const err = await failure({ body });
      expect([err.statusCode, err.code], String(message)).to.deep.equal([400, code]);
      if (typeof message === "string") expect(err.message).to.equal(message);
      else expect(err.message).to.match(message);
    }
    for (const dockerfile of ["../Dockerfile", "sub/../../Dockerfile"]) {
      const err = await failure({ body: tar, dockerfile });
      expect([err.statusCode, err.message]).to.deep.equal([400, `forbidden path outside the build context: ${dockerfile} ()`]);
    }
    expect((await failure({ body: tar, dockerfile: "sub/Dockerfile.prod" })).message).to.equal("Cannot locate specified Dockerfile: sub/Dockerfile.prod");
  });

  it("answers a refused body with its error while the client is still sending, without closing the connection", async () => {
    let received: IncomingMessage | undefined;
    let destroyedAtFailure: boolean | undefined;
    const server = createServer((req, res) => {
      received = req;
      openBuildContext({ body: req, workDir: workDir(), disablePigz: false }).then(
        () => res.writeHead(200).end("ok"),
        (e: EngineError) => {
          // (destroyed before the whole body came; after it, Node destroys a request by itself)
          destroyedAtFailure = req.destroyed && !req.complete;
          res.writeHead(e.statusCode).end(e.message);
        },
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const body = Buffer.concat([await makeTar([BAD_ENTRY]), Buffer.alloc(8 * 1024 * 1024)]);
      const { status, text } = await post((server.address() as AddressInfo).port, body);
      expect([status, text]).to.deep.equal([400, BAD_ENTRY_MESSAGE]);
      // the body was not destroyed (which closes the connection) but read to its end and dropped
      expect(destroyedAtFailure).to.equal(false);
      if (!received!.readableEnded) await once(received!, "end", { signal: AbortSignal.timeout(10_000) });
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  it("answers the special and unknown remotes as Docker does", async () => {
    const session = await failure({ remote: "client-session" });
    expect([session.statusCode, session.message]).to.deep.equal([400, "experimental session with v1 builder is no longer supported, use builder version v2 (BuildKit) instead"]);
    for (const remote of ["foo", "ftp://127.0.0.1/x", "file:///tmp/repo.git"]) {
      const err = await failure({ remote, body: Buffer.from("ignored") });
      expect([err.statusCode, err.message]).to.deep.equal([400, `remoteURL (${remote}) could not be recognized as URL`]);
    }
  });

  it("tells text, HTML and binary apart as Go's DetectContentType does", () => {
    expect(detectContentType(Buffer.from(DOCKERFILE))).to.equal("text/plain");
    expect(detectContentType(Buffer.from("  <html><body>"))).to.equal("text/html");
    expect(detectContentType(Buffer.from("<?xml version"))).to.equal("text/xml");
    expect(detectContentType(gzipSync("x"))).to.equal("application/x-gzip");
    expect(detectContentType(Buffer.from("Dockerfile\0\0\0"))).to.equal("application/octet-stream");
  });
});

/** POSTs `body` to a loopback port; the answer's status and text (a body cut short by the answer is fine). */
function post(port: number, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/build", headers: { "content-length": body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.setTimeout(20_000, () => req.destroy(new Error("no answer in 20 s")));
    req.end(body);
  });
}

describe("build context: remote URLs on loopback", () => {
  let server: Server;
  let base: string;
  let git: GitFixtures;
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const sizes = new Map<string, number>();
  const send = (type: string | undefined, data: Buffer | string, status = 200) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, type ? { "content-type": type } : {}).end(data);
  };
  const serve = (path: string, type: string | undefined, data: Buffer) => {
    routes.set(path, send(type, data));
    sizes.set(path, data.length);
  };

  before(async () => {
    const tar = await makeTar(ctxEntries());
    serve("/ctx.tar", "application/x-tar", tar);
    serve("/ctx.tar.gz", "application/gzip", gzipSync(tar));
    serve("/ctx.tar.xz", undefined, compress("xz", tar));
    routes.set("/Dockerfile", send("application/octet-stream", DOCKERFILE));
    routes.set("/df.txt", send("text/plain; charset=utf-8", DOCKERFILE));
    routes.set("/auth.tar", (req, res) => {
      if (req.headers.authorization === `Basic ${Buffer.from("user:s3cret").toString("base64")}`) return send("application/x-tar", tar)(req, res);
      send("text/plain", "who are you\n", 401)(req, res);
    });
    routes.set("/page.html", send("text/html", "<html></html>"));
    routes.set("/sniffed.html", send(undefined, "<!DOCTYPE html><p>"));
    routes.set("/empty", send("application/x-tar", ""));
    routes.set("/missing", send("text/plain", "no such file\n", 404));
    routes.set("/private", send("text/plain", "go away\n", 403));
    routes.set("/broken", send("text/plain", "oops\n", 500));
    routes.set("/big.tar", send("application/x-tar", Buffer.alloc(256 * 1024)));
    routes.set("/bad.tar", send("application/x-tar", Buffer.concat([await makeTar([BAD_ENTRY])])));
    routes.set("/slow", (_req, res) => res.writeHead(200, { "content-type": "application/x-tar" }).write(tar.subarray(0, 512))); // never ends
    git = gitFixtures(makeTempDir("engine-build-context-git-"));
    server = createServer((req, res) => {
      const route = routes.get(req.url ?? "");
      if (route) return route(req, res);
      serveStatic(git.served, req, res);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server?.close();
    server?.closeAllConnections();
  });

  it("unpacks a tar, gzip or xz one, whatever the type the server says, and reports the download", async () => {
    for (const path of ["/ctx.tar", "/ctx.tar.gz", "/ctx.tar.xz"]) {
      const progress: number[] = [];
      const ctx = await open({ remote: `${base}${path}`, onDownloadProgress: (p) => progress.push(p.bytes) });
      expect(ctx.source).to.equal("url-archive");
      expectUnpacked(ctx);
      expect(progress.length).to.be.greaterThan(0);
      expect(progress.at(-1)).to.equal(sizes.get(path));
    }
  });

  it("takes a text answer as a Dockerfile alone, by its type or sniffed from octet-stream", async () => {
    for (const path of ["/df.txt", "/Dockerfile"]) {
      const ctx = await open({ remote: `${base}${path}`, dockerfile: "ignored" });
      expect([ctx.source, ctx.dockerfileText, ctx.dockerignore]).to.deep.equal(["url-dockerfile", DOCKERFILE, undefined]);
      expect(readdirSync(ctx.root)).to.deep.equal([]);
    }
  });

  it("answers bad remotes with errors naming the URL, never a 5xx", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const closedPort = (closed.address() as AddressInfo).port;
    closed.close();
    const cases: [string, number, string | RegExp, Partial<BuildContextRequest>?][] = [
      ["/page.html", 400, `error detecting content type for remote ${base}/page.html: unsupported Content-Type "text/html"`],
      ["/sniffed.html", 400, `error detecting content type for remote ${base}/sniffed.html: unsupported Content-Type ""`],
      ["/empty", 400, `error detecting content type for remote ${base}/empty: empty response`],
      ["/missing", 404, `error downloading remote context ${base}/missing: failed to GET ${base}/missing with status 404 Not Found: no such file`],
      ["/private", 403, `error downloading remote context ${base}/private: failed to GET ${base}/private with status 403 Forbidden: go away`],
      ["/broken", 400, `error downloading remote context ${base}/broken: failed to GET ${base}/broken with status 500 Internal Server Error: oops`],
      ["/big.tar", 400, `error downloading remote context ${base}/big.tar: larger than the limit of 65536 bytes`, { limits: { downloadBytes: 65536 } }],
      ["/slow", 400, `error downloading remote context ${base}/slow: no complete answer within 0.5 s`, { limits: { downloadTimeoutMs: 500 } }],
      ["/bad.tar", 400, BAD_ENTRY_MESSAGE],
      [`:${closedPort}/x.tar`, 400, new RegExp(`^error downloading remote context http://127.0.0.1:${closedPort}/x.tar: Get "http://127.0.0.1:${closedPort}/x.tar": dial tcp 127\\.0\\.0\\.1:${closedPort}: connect: connection refused$`)],
    ];
    for (const [path, status, message, extra] of cases) {
      const remote = path.startsWith(":") ? `http://127.0.0.1${path}` : `${base}${path}`;
      const err = await failure({ remote, ...extra });
      expect(err.statusCode, path).to.equal(status);
      if (typeof message === "string") expect(err.message).to.equal(message);
      else expect(err.message).to.match(message);
    }
  });

  it("sends a URL's user and password as Basic authorization, and hides the password in messages", async () => {
    const at = (password: string) => `http://user:${password}@127.0.0.1:${new URL(base).port}/auth.tar`;
    expect((await open({ remote: at("s3cret") })).dockerfileText).to.equal(DOCKERFILE);
    const err = await failure({ remote: at("wrong") });
    expect([err.statusCode, err.message]).to.deep.equal([401, `error downloading remote context ${at("xxxxx")}: failed to GET ${at("xxxxx")} with status 401 Unauthorized: who are you`]);
  });

  it("stops a download when the signal fires, and leaves nothing behind", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("client went away")), 200);
    const dir = workDir();
    const err = await open({ remote: `${base}/slow`, workDir: dir, signal: controller.signal }).then(() => undefined, (e: Error) => e);
    expect(err?.message).to.equal("client went away");
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it("clones a git repository over git's dumb HTTP: ref and subdir, the whole repository with its .git", async () => {
    const sub = await open({ remote: `${base}/repo.git#feature:sub` });
    expect(sub.source).to.equal("git");
    expect(readdirSync(sub.root).sort()).to.deep.equal(["Dockerfile", "f", "s"]);
    expect(sub.dockerfileText).to.equal("FROM sub\n");
    const whole = await open({ remote: `${base}/repo.git#main` });
    expect(readdirSync(whole.root).sort()).to.deep.equal([".dockerignore", ".git", "Dockerfile", "sub", "top"]);
    expect(whole.dockerignore).to.equal(".git\n");
    const tag = await open({ remote: `${base}/repo.git#v1:sub` });
    expect(readdirSync(tag.root).sort()).to.deep.equal(["Dockerfile", "f", "s"]);
  });

  it("lets no submodule of a client's repository reach the host's own through file://", async () => {
    const err = await failure({ remote: `${base}/with-submodule.git#main` });
    expect([err.statusCode, err.code]).to.deep.equal([400, "ENGINE_ERR_CONTEXT_GIT_FAILED"]);
    expect(err.message).to.match(/^error initializing submodules: .*transport 'file' not allowed/s);
  });

  it("answers a git ref, subdir or repository that is not there with 400s", async () => {
    const cases: [string, string | RegExp][] = [
      ["/repo.git#nope", new RegExp(`^error fetching nope from ${base}/repo.git: .*couldn't find remote ref nope`, "s")],
      ["/repo.git", /^error fetching master from .*couldn't find remote ref master/s], // Docker's default ref
      ["/repo.git#main:nosub", 'error setting git context, "nosub" does not exist in the repository'],
      ["/repo.git#main:top", "error setting git context, not a directory: top"],
      ["/repo.git#main:../..", 'error setting git context, "../.." not within git root'],
      ["/none.git#main", new RegExp(`^error fetching main from ${base}/none.git: `)],
    ];
    for (const [path, message] of cases) {
      const err = await failure({ remote: `${base}${path}` });
      expect([err.statusCode, err.code], path).to.deep.equal([400, "ENGINE_ERR_CONTEXT_GIT_FAILED"]);
      if (typeof message === "string") expect(err.message).to.equal(message);
      else expect(err.message).to.match(message);
    }
  });
});

describe("build context: git over file://", () => {
  let git: GitFixtures;
  before(() => {
    git = gitFixtures(makeTempDir("engine-build-context-git-"));
  });
  // a client's URL may not be file:// (openBuildContext refuses it); the daemon's clone takes it when allowed
  const clone = (url: string, protocols = ["file"]) => cloneGitContext(url, join(workDir(), "git"), { protocols, timeoutMs: 60_000 });

  it("fetches only the ref, shallow, and checks out the subdir", async () => {
    const root = await clone(`file://${git.src}#feature:sub`);
    expect(readdirSync(root).sort()).to.deep.equal(["Dockerfile", "f", "s"]);
    const repo = join(root, "..");
    expect(execFileSync("git", ["-C", repo, "rev-parse", "--is-shallow-repository"], { encoding: "utf8" }).trim()).to.equal("true");
    expect(execFileSync("git", ["-C", repo, "rev-list", "--count", "HEAD"], { encoding: "utf8" }).trim()).to.equal("1");
  });

  it("checks out submodules, as Docker does", async () => {
    const root = await clone(`file://${git.withSubmodule}#main`);
    expect(readFileSync(join(root, "lib/lib-file"), "utf8")).to.equal("from the submodule\n");
  });

  it("uses no protocol it was not given", async () => {
    const err = await clone(`file://${git.src}#main`, ["https"]).then(() => undefined, (e: EngineError) => e);
    expect(err?.statusCode).to.equal(400);
    expect(err?.message).to.match(/^error fetching main from file:\/\/.*transport 'file' not allowed/s);
  });

  it("splits URLs and fragments as Docker does", () => {
    expect(parseGitRemote("github.com/user/repo")).to.deep.equal({ remote: "https://github.com/user/repo", ref: "master", subdir: "" });
    expect(parseGitRemote("git@host:user/repo.git#branch:dir/sub/")).to.deep.equal({ remote: "git@host:user/repo.git", ref: "branch", subdir: "dir/sub/" });
    expect(parseGitRemote("https://host/repo.git#:dir")).to.deep.equal({ remote: "https://host/repo.git", ref: "master", subdir: "dir" });
    expect(parseGitRemote("https://host/repo.git#pull/42/head")).to.deep.equal({ remote: "https://host/repo.git", ref: "pull/42/head", subdir: "" });
  });
});
