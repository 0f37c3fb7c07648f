/**
 * The instructions that write files, at their edges, built by engined and by Docker's own
 * daemon (dockerd 20.10, classic builder) from the same context and compared: ADD of local
 * archives (tar, gzip, bzip2, xz: unpacked), COPY with wildcards, --chown by ids and by the
 * names of the image's /etc/passwd and /etc/group, COPY of a file onto a folder, into a folder
 * the image reaches through a symlink, through a symlink that climbs (it stays in the root),
 * COPY --from an image that is no stage; --chown's errors in Docker's words; --chmod (BuildKit's,
 * which dockerd 20.10 refuses). ADD of URLs (a server on loopback, engined only: dockerd has no
 * network in its namespace; its behaviour was checked with a server in there): downloaded,
 * 0600, the Last-Modified time, archives not unpacked, the progress line, the cache, the
 * errors. And a RUN's layer: only what its command changed, none when it changed nothing.
 */
import "./helpers/root-hooks.js";
import { createServer } from "node:http";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { makeTar } from "./fixtures/images.js";
import { contextDir, contextTar, NOTHING_LEFT, settledLeftovers, postBuild, serveOnLoopback } from "./helpers/build-api.js";
import { cliBuild, cliOk, historyShape, startBuildDaemons, streamShape, type BuildDaemon, type BuildDaemons } from "./helpers/build-daemons.js";
import { makeTempDir } from "./helpers/engined.js";

/** The image's users and the folders and symlinks the COPYs below go into, through or next to. */
const PREPARE = "RUN echo 'app:x:1234:2345::/home/app:/bin/sh' >> /etc/passwd && echo 'appg:x:2345:' >> /etc/group && mkdir -p /real/dir /existing && ln -s /real/dir /link && ln -s ../../../../etc /escape";

const FILES = `FROM busybox
${PREPARE}
ADD x.tar /tar/
ADD x.tgz x.tbz2 /many/
ADD x.txz /xz
ADD plain.txt /plain.txt
COPY src/*.txt /wild/
COPY src/[ab].txt src/sub /wild2/
COPY --chown=app:appg f1 /owned-names
COPY --chown=1:2 f1 /owned-ids
COPY --chown=app:2 src /owned-dir/
COPY f1 /existing
COPY f1 /link/
COPY f1 /escape/copied-through-escape
COPY --from=busybox /bin/busybox /from-image
`;

/** What the image's files are: name, mode, owner, size and type (times differ between builds). */
const LIST = "find /tar /many /xz /plain.txt /wild /wild2 /owned-names /owned-ids /owned-dir /existing /link/ /real /etc/copied-through-escape /from-image | sort | xargs stat -c '%n %a %u:%g %s %F'";

async function archives(): Promise<Record<string, Buffer>> {
  const tar = await makeTar([{ name: "in/", type: "directory" }, { name: "in/a", data: "from the tar\n", uid: 7, gid: 8 }]);
  const tool = (name: string) => execFileSync(name, ["-c"], { input: tar });
  return { "x.tar": tar, "x.tgz": gzipSync(tar), "x.tbz2": tool("bzip2"), "x.txz": tool("xz") };
}

describe("build instructions: files (COPY, ADD, RUN's layer)", function () {
  this.timeout(300_000);
  let daemons: BuildDaemons;
  const each = () => [daemons.engined, daemons.dockerd].filter((d): d is BuildDaemon => d !== undefined);
  const run = (d: BuildDaemon, image: string, script: string) => cliOk(d.host, ["run", "--rm", "--network", "none", image, "sh", "-c", script]);

  before(async () => {
    daemons = await startBuildDaemons();
  });
  after(async () => {
    await daemons?.stop();
  });

  it("ADD unpacks local archives, COPY takes wildcards, owners, folders and symlinks as dockerd does", async () => {
    const dir = contextDir({ Dockerfile: FILES, ...(await archives()), "plain.txt": "not an archive\n", f1: "f1\n", "src/a.txt": "a\n", "src/b.txt": "b\n", "src/c.md": "c\n", "src/sub/d": "d\n" });
    const listings: string[] = [];
    const histories: string[][] = [];
    for (const d of each()) {
      const out = await cliBuild(d.host, ["-t", "files", dir]);
      expect(out.code, `${d.name}: ${out.stderr}${out.stdout}`).to.equal(0);
      listings.push(await run(d, "files", LIST));
      histories.push(await historyShape(d.host, "files"));
    }
    const mine = listings[0].split("\n");
    expect(mine).to.include.members([
      "/tar/in/a 644 7:8 13 regular file", // unpacked with the tar's owners
      "/many/in/a 644 7:8 13 regular file",
      "/xz/in/a 644 7:8 13 regular file",
      "/plain.txt 644 0:0 15 regular file",
      "/wild/a.txt 644 0:0 2 regular file",
      "/wild/b.txt 644 0:0 2 regular file",
      "/wild2/d 644 0:0 2 regular file", // a folder's contents, not the folder
      "/owned-names 644 1234:2345 3 regular file",
      "/owned-ids 644 1:2 3 regular file",
      "/owned-dir/sub/d 644 1234:2 2 regular file",
      "/existing/f1 644 0:0 3 regular file", // onto a folder: into it
      "/real/dir/f1 644 0:0 3 regular file", // through the image's symlink
      "/etc/copied-through-escape 644 0:0 3 regular file", // the climbing symlink stays in the root
    ]);
    expect(mine.filter((l) => l.startsWith("/wild/"))).to.have.length(2);
    expect(mine.find((l) => l.startsWith("/from-image "))).to.match(/^\/from-image 755 0:0 \d+ regular file$/);
    expect(existsSync("/etc/copied-through-escape"), "the host's /etc").to.equal(false);
    expect(histories[0]).to.include("/bin/sh -c #(nop) COPY --chown=1:2file:<sum> in /owned-ids |+");
    if (listings.length < 2) return;
    expect(listings[0]).to.equal(listings[1]);
    expect(histories[0]).to.deep.equal(histories[1]);
  });

  it("--chown's errors are Docker's: a user with no group of its name, an unknown user, three parts", async () => {
    const cases: [string, string][] = [
      ["app", "unable to convert uid/gid chown string to host mapping: can't find gid for group app: no such group: app"],
      ["nosuch:appg", "unable to convert uid/gid chown string to host mapping: can't find uid for user nosuch: no such user: nosuch"],
      ["1:nogroup2", "unable to convert uid/gid chown string to host mapping: can't find gid for group nogroup2: no such group: nogroup2"],
      ["a:b:c", "unable to convert uid/gid chown string to host mapping: invalid chown string format: a:b:c"],
    ];
    for (const [spec, message] of cases) {
      for (const d of each()) {
        const body = await contextTar({ Dockerfile: `FROM busybox\n${PREPARE}\nCOPY --chown=${spec} f /f\n`, f: "x" });
        const answer = await postBuild(d.socket, { body, query: { forcerm: "1" } });
        expect(answer.error, `${d.name}: --chown=${spec}`).to.equal(message);
      }
    }
    expect(await settledLeftovers(daemons.engined.dir!)).to.deep.equal(NOTHING_LEFT);
  });

  it("--chmod sets the copied files' mode (BuildKit's option, refused by dockerd 20.10's classic builder)", async () => {
    const body = await contextTar({ Dockerfile: "FROM busybox\nCOPY --chmod=700 f /copied\nADD --chmod=0640 f /added\nCOPY --chown=1:1 --chmod=755 f /both\n", f: "x" });
    const answer = await postBuild(daemons.engined.socket, { body, query: { t: "chmod" } });
    expect(answer.error, answer.text).to.equal(undefined);
    expect(await run(daemons.engined, "chmod", "stat -c '%n %a %u:%g' /copied /added /both")).to.equal("/copied 700 0:0\n/added 640 0:0\n/both 755 1:1\n");
    expect(await historyShape(daemons.engined.host, "chmod")).to.include("/bin/sh -c #(nop) COPY --chown=1:1 --chmod=755 file:<sum> in /both |+");
    if (!daemons.dockerd) return;
    const theirs = await postBuild(daemons.dockerd.socket, { body });
    expect(theirs.error).to.equal("the --chmod option requires BuildKit. Refer to https://docs.docker.com/go/buildkit/ to learn how to build images with BuildKit enabled");
  });

  it("a RUN's layer holds what its command changed, not the runtime's mount points; one that changed nothing makes none", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nRUN true\nRUN echo more >> /etc/group\nRUN test -e /etc/hosts\n" });
    const layers: number[] = [];
    for (const d of each()) {
      const out = await cliBuild(d.host, ["-t", "runlayers", dir]);
      expect(out.code, `${d.name}: ${out.stderr}`).to.equal(0);
      layers.push(JSON.parse(await cliOk(d.host, ["image", "inspect", "--format", "{{json .RootFS.Layers}}", "runlayers"])).length);
      expect((await historyShape(d.host, "runlayers")).slice(0, 3), d.name).to.deep.equal([
        "/bin/sh -c test -e /etc/hosts|0B",
        "/bin/sh -c echo more >> /etc/group|+",
        "/bin/sh -c true|0B",
      ]);
    }
    expect(layers[0]).to.equal(2); // busybox's and /etc/group's
    if (layers.length > 1) expect(layers[0]).to.equal(layers[1]);
    const saved = makeTempDir("engine-build-save-");
    execFileSync("sh", ["-c", `docker -H ${daemons.engined.host} save runlayers | tar -x -C ${saved}`], { env: { ...process.env, DOCKER_CONFIG: saved } });
    const manifest = JSON.parse(readFileSync(join(saved, "manifest.json"), "utf8"))[0];
    const names = execFileSync("tar", ["-tf", join(saved, manifest.Layers.at(-1))], { encoding: "utf8" }).trim().split("\n");
    expect(names).to.deep.equal(["etc/", "etc/group"]);
  });

  describe("ADD of a URL (a server on loopback)", () => {
    let server: { base: string; close(): void };
    let base: string;
    let version = "one\n";
    const MODIFIED = "Thu, 02 Jan 2020 03:04:05 GMT";
    before(async () => {
      const tgz = gzipSync(await makeTar([{ name: "in", data: "packed\n" }]));
      server = await serveOnLoopback((req, res) => {
        if (req.url === "/file.txt") return res.writeHead(200, { "last-modified": MODIFIED, "content-length": Buffer.byteLength(version) }).end(version);
        if (req.url === "/no-date.txt") return res.writeHead(200).end("undated\n");
        if (req.url === "/pack.tar.gz") return res.writeHead(200, { "last-modified": MODIFIED }).end(tgz);
        res.writeHead(404, "Not Found").end("  nothing here \n");
      });
      base = server.base;
    });
    after(() => server?.close());

    it("downloads into the image: mode 0600, the Last-Modified time (else the epoch), archives kept whole", async () => {
      const body = await contextTar({ Dockerfile: `FROM busybox\nARG BASE\nADD $BASE/file.txt /dir/\nADD $BASE/file.txt /named\nADD $BASE/no-date.txt /\nADD $BASE/pack.tar.gz /packs/\n` });
      const answer = await postBuild(daemons.engined.socket, { body, query: { t: "urls", buildargs: JSON.stringify({ BASE: base }) } });
      expect(answer.error, answer.text).to.equal(undefined);
      // each download's progress, then a line of its own, as dockerd sends them
      const at = answer.messages.findIndex((m) => m.status === "Downloading");
      expect(answer.messages.slice(at, at + 2)).to.deep.equal([
        { status: "Downloading", progressDetail: { current: 4, total: 4 }, progress: `[${"=".repeat(50)}>] ${"4B".padStart(8)}/4B` },
        { stream: "\n" },
      ]);
      const files = await run(daemons.engined, "urls", "stat -c '%n %a %u:%g %s %Y' /dir/file.txt /named /no-date.txt /packs/pack.tar.gz");
      const stamp = Date.parse(MODIFIED) / 1000;
      expect(files.split("\n").slice(0, 3)).to.deep.equal([`/dir/file.txt 600 0:0 4 ${stamp}`, `/named 600 0:0 4 ${stamp}`, "/no-date.txt 600 0:0 8 0"]);
      expect(files).to.match(/\/packs\/pack\.tar\.gz 600 0:0 \d+ \d+\n$/);
      // the history names a download by its checksum alone (no file:), as Docker's does
      expect(await historyShape(daemons.engined.host, "urls")).to.include("/bin/sh -c #(nop) ADD <sum> in /packs/ |+");
    });

    it("is cached while the answer stays the same, and built again when it changes", async () => {
      const body = await contextTar({ Dockerfile: `FROM busybox\nADD ${base}/file.txt /cached\n` });
      version = "one\n";
      const first = await postBuild(daemons.engined.socket, { body });
      const again = await postBuild(daemons.engined.socket, { body });
      expect(streamShape(again.text)).to.include("Step 2/2 : ADD");
      expect(again.text).to.include(" ---> Using cache\n");
      expect(again.imageId).to.equal(first.imageId);
      version = "two, longer\n";
      const changed = await postBuild(daemons.engined.socket, { body });
      expect(changed.text).to.not.include("Using cache");
      expect(changed.imageId).to.not.equal(first.imageId);
    });

    it("downloads from a port browsers call bad (fetch refuses 6665-6669, 6000, 10080...), as Docker's daemon does", async function () {
      const server = createServer((_req, res) => res.end("from a bad port\n"));
      // (the first of these IRC ports that is free on loopback; none free is no test)
      let port = 0;
      for (const p of [6665, 6666, 6667, 6668, 6669]) {
        const listening = await new Promise<boolean>((resolve) => {
          server.once("error", () => resolve(false));
          server.listen(p, "127.0.0.1", () => resolve(true));
        });
        if (listening) {
          port = p;
          break;
        }
      }
      if (!port) this.skip();
      try {
        const built = await postBuild(daemons.engined.socket, { body: await contextTar({ Dockerfile: `FROM busybox\nADD http://127.0.0.1:${port}/got.txt /got.txt\nRUN cat /got.txt\n` }) });
        expect(built.error, built.text).to.equal(undefined);
        expect(built.text).to.include("from a bad port");
      } finally {
        server.close();
      }
    });

    it("answers a failed download and a COPY of a URL with Docker's messages, and leaves nothing", async () => {
      const missing = await postBuild(daemons.engined.socket, { body: await contextTar({ Dockerfile: `FROM busybox\nADD ${base}/missing.txt /m\n` }) });
      expect(missing.error).to.equal(`ADD failed: failed to GET ${base}/missing.txt with status 404 Not Found: nothing here`);
      const copy = await postBuild(daemons.engined.socket, { body: await contextTar({ Dockerfile: `FROM busybox\nCOPY ${base}/file.txt /m\n` }) });
      expect(copy.error).to.equal("COPY failed: source can't be a URL for COPY");
      const closed = await serveOnLoopback(() => undefined);
      closed.close();
      const port = new URL(closed.base).port;
      const refused = await postBuild(daemons.engined.socket, { body: await contextTar({ Dockerfile: `FROM busybox\nADD http://127.0.0.1:${port}/x /x\n` }) });
      expect(refused.error).to.match(new RegExp(`^ADD failed: Get "http://127.0.0.1:${port}/x": dial tcp 127\\.0\\.0\\.1:${port}: connect: connection refused$`));
      expect(await settledLeftovers(daemons.engined.dir!)).to.deep.equal(NOTHING_LEFT);
    });
  });
});
