/**
 * Registry clients against engined and a real registry (Debian's docker-registry 2.8.2): the
 * Docker CLI's `login`, `push`, `pull`, `logout` with each of the three set-ups (no auth;
 * htpasswd behind TLS; bearer tokens from the token server), dockerode and the Docker SDK for
 * Python against the token registry, no credential in the daemon's debug log, cross-repository
 * mounts, a legacy v1-only registry refused, zstd layers, and `docker pull`'s output compared
 * with Docker's own daemon where `dockerd` is installed.
 */
import "./helpers/root-hooks.js";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpReq, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import Docker from "dockerode";
import { makeTempDir, ROOT, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";
import { MEDIA, pushImage, RegistrySession } from "./fixtures/registry-push.js";

const USER = "tester";
const PASSWORD = "s3cret-pass";
const WRONG = "wrong-pass-7Qx";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ACCEPT = [MEDIA.dockerManifest, MEDIA.dockerList, MEDIA.ociManifest, MEDIA.ociIndex].join(", ");

/** Whether a command is on the PATH. */
function have(cmd: string): boolean {
  try {
    execFileSync("which", [cmd], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The digest the registry serves for a tag (authenticating as it demands). */
async function registryDigest(reg: TestRegistry, repo: string, ref: string): Promise<string> {
  const s = new RegistrySession(reg, repo, reg.auth === "none" ? undefined : reg.users[0], "pull");
  const res = await s.fetch("GET", `/v2/${repo}/manifests/${ref}`, { headers: { accept: ACCEPT } });
  expect(res.status, res.body.toString()).to.equal(200);
  return String(res.headers["docker-content-digest"]);
}

/** Lines of a command's output, without empty ones. */
const linesOf = (text: string) => text.split("\n").map((l) => l.trimEnd()).filter(Boolean);

/**
 * A `docker pull` output split into the lines about layers (`<12 hex>: <status>`, in order per
 * layer) and the rest, in order: the shape to compare between daemons (layers interleave by timing).
 */
function pullShape(text: string): { other: string[]; layers: Map<string, string[]> } {
  const other: string[] = [];
  const layers = new Map<string, string[]>();
  for (const line of linesOf(text)) {
    const m = /^([0-9a-f]{12}): (.*)$/.exec(line);
    if (!m) {
      other.push(line);
      continue;
    }
    if (!layers.has(m[1])) layers.set(m[1], []);
    layers.get(m[1])!.push(m[2]);
  }
  return { other, layers };
}

/** Docker's order of a layer's pull statuses; each may repeat (Downloading, Extracting). */
const DOCKER_ORDER = ["Pulling fs layer", "Waiting", "Downloading", "Verifying Checksum", "Download complete", "Extracting", "Pull complete"];

/** Whether a layer's statuses start with "Pulling fs layer", end with "Pull complete" and never go back in Docker's order. */
function inDockerOrder(seq: readonly string[]): boolean {
  const at = seq.map((s) => DOCKER_ORDER.indexOf(s));
  return seq[0] === "Pulling fs layer" && seq.at(-1) === "Pull complete" && at.every((i, k) => i >= 0 && (k === 0 || i >= at[k - 1]));
}

/** Everything that could be a credential in a log: the secret, and base64(url) runs that decode to text holding it. */
function credentialLeaks(out: string, secrets: string[]): string[] {
  const found: string[] = [];
  for (const s of secrets) {
    const forms = [s, `${USER}:${s}`].flatMap((x) => [x, Buffer.from(x).toString("base64"), Buffer.from(x).toString("base64url")]);
    for (const f of forms) if (out.includes(f.replace(/=+$/, ""))) found.push(`contains ${JSON.stringify(f)}`);
  }
  for (const m of out.matchAll(/[A-Za-z0-9+/_-]{12,}={0,2}/g)) {
    const decoded = Buffer.from(m[0].replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("latin1");
    for (const s of secrets) if (decoded.includes(s)) found.push(`base64 run ${m[0].slice(0, 40)}... decodes to text with ${JSON.stringify(s)}`);
  }
  return found;
}

/** A raw POST /images/create?fromImage= over the socket: the status and the JSON lines. */
function rawPull(socketPath: string, name: string, tag: string, auth?: object): Promise<{ status: number; lines: Record<string, unknown>[]; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-length": "0" };
    if (auth) headers["x-registry-auth"] = Buffer.from(JSON.stringify(auth)).toString("base64url");
    const req = httpReq({ socketPath, method: "POST", path: `/v1.41/images/create?fromImage=${encodeURIComponent(name)}&tag=${tag}`, headers, timeout: 60_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, text, lines: res.statusCode === 200 ? linesOf(text).map((l) => JSON.parse(l)) : [] });
        } catch (e) {
          reject(e);
        }
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("pull timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** Per layer id, the statuses in order, a run of the same status (Downloading, Extracting) counted once. */
function statusesByLayer(lines: Record<string, unknown>[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const l of lines) {
    const id = l.id as string | undefined;
    if (!id || !/^[0-9a-f]{12}$/.test(id)) continue;
    const list = out.get(id) ?? [];
    if (list.at(-1) !== l.status) list.push(l.status as string);
    out.set(id, list);
  }
  return out;
}

// --------------------------------------------------------------------------------------------
// Docker's own daemon, for the comparison of `docker pull` outputs

interface Dockerd {
  socket: string;
  stop(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function descendants(pid: number): number[] {
  const procs: { pid: number; ppid: number }[] = [];
  for (const name of execFileSync("ls", ["/proc"], { encoding: "utf8" }).split("\n")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      procs.push({ pid: Number(name), ppid: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) });
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const c of procs) if (c.ppid === p) (out.push(c.pid), queue.push(c.pid));
  }
  return out;
}

async function stopPid(pid: number, graceMs: number): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const until = Date.now() + graceMs;
  while (alive(pid) && Date.now() < until) await sleep(50);
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Whether the network namespace of `pid` has a TCP socket listening on 127.0.0.1:port. */
function listeningIn(pid: number, port: number): boolean {
  try {
    const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    return readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").some((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === want && f[3] === "0A";
    });
  } catch {
    return false;
  }
}

/**
 * Docker's daemon as bench/image-load.mjs starts it: its own data root, exec root, socket and
 * pid file, in its own network namespace (`unshare --net`) with no bridge and no iptables. The
 * host's 127.0.0.1 is not reachable from there, so (as bench/pull.mjs does) a second
 * docker-registry is started inside that namespace (`nsenter --net`), serving the same storage
 * folder read-only on the same port: the same manifests and blobs under the same name.
 */
async function startDockerd(reg: TestRegistry): Promise<Dockerd> {
  const dir = makeTempDir("engine-dockerd-");
  const socket = join(dir, "d.sock");
  const fd = openSync(join(dir, "dockerd.log"), "a");
  const proc: ChildProcess = spawn("unshare", ["--net", "dockerd", "-H", `unix://${socket}`, "--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"),
    "--pidfile", join(dir, "d.pid"), "--bridge=none", "--iptables=false", "--ip6tables=false"], { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  let registry: ChildProcess | undefined;
  const pid = proc.pid!;
  const stop = async () => {
    const children = descendants(pid);
    if (registry?.pid) await stopPid(registry.pid, 3000);
    await stopPid(pid, 15_000);
    for (const c of children) await stopPid(c, 5000);
    const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && m.startsWith(`${dir}/`));
    for (const m of mounts.reverse()) {
      try {
        execFileSync("umount", ["-l", m], { stdio: "ignore" });
      } catch {
        // gone meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const until = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`dockerd exited: ${readFileSync(join(dir, "dockerd.log"), "utf8").slice(-1000)}`);
      if (Date.now() > until) throw new Error("dockerd was not ready in 30 s");
      const ok = await httpRequest({ socketPath: socket }, "GET", "/_ping").then((r) => r.status === 200, () => false);
      if (ok) break;
      await sleep(50);
    }
    const netns = `/proc/${pid}/ns/net`;
    execFileSync("nsenter", [`--net=${netns}`, "ip", "link", "set", "lo", "up"], { stdio: "ignore", timeout: 10_000 });
    const port = Number(reg.host.split(":")[1]);
    const config = join(dir, "registry.yml");
    writeFileSync(config, [
      "version: 0.1",
      "log:",
      "  level: warn",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${join(reg.dir, "storage")}`,
      "  maintenance:",
      "    uploadpurging:",
      "      enabled: false",
      "    readonly:",
      "      enabled: true",
      "http:",
      `  addr: 127.0.0.1:${port}`,
      "  secret: engine-test-registry-secret",
      "",
    ].join("\n"));
    const rfd = openSync(join(dir, "registry.log"), "a");
    registry = spawn("nsenter", [`--net=${netns}`, "docker-registry", "serve", config], { stdio: ["ignore", rfd, rfd] });
    closeSync(rfd);
    const runtil = Date.now() + 15_000;
    while (!listeningIn(pid, port)) {
      if (registry.exitCode !== null || Date.now() > runtil) throw new Error(`the registry in dockerd's namespace did not start: ${readFileSync(join(dir, "registry.log"), "utf8").slice(-500)}`);
      await sleep(20);
    }
    return { socket, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// --------------------------------------------------------------------------------------------

describe("registry clients: docker CLI, dockerode, python3-docker", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let client: Docker;
  let work: string;
  let rootfsTar: string;
  const configs: string[] = [];
  const registries: TestRegistry[] = [];
  /** Identity tokens (refresh tokens) logins gave: credentials too. */
  const identityTokens: string[] = [];

  /** A private DOCKER_CONFIG folder (kept for the test: login writes to it), removed after the run. */
  const newConfig = () => {
    const dir = mkdtempSync(join(tmpdir(), "engine-docker-config-"));
    configs.push(dir);
    return dir;
  };

  /** The Docker CLI against engined with this config folder. */
  const cli = (config: string, args: string[], input?: string): Promise<RunResult> =>
    runCommand("docker", ["-H", `unix://${d.socket}`, ...args], {
      env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined, DOCKER_CONFIG: config },
      timeoutMs: 60_000,
      input,
    });

  const ok = async (config: string, args: string[], input?: string) => {
    const r = await cli(config, args, input);
    expect(r.code, `docker ${args.join(" ")}:\n${r.stderr}\n${r.stdout}`).to.equal(0);
    return r;
  };

  const registry = async (opts: Parameters<typeof startRegistry>[0]) => {
    const reg = await startRegistry(opts);
    registries.push(reg);
    return reg;
  };

  /** Imports the busybox root filesystem: the new image's ID. */
  const importBusybox = async (config: string) => {
    const r = await ok(config, ["import", "--change", 'CMD ["sh"]', rootfsTar]);
    const id = r.stdout.trim();
    expect(id).to.match(/^sha256:[0-9a-f]{64}$/);
    return id;
  };

  before(async function () {
    work = makeTempDir("engine-registry-clients-");
    rootfsTar = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    // --debug: the log the credentials must never appear in.
    d = await startEngined({ args: ["--debug"] });
    client = new Docker({ socketPath: d.socket });
  });

  afterEach(async function () {
    if (!d) return;
    const list = await client.listContainers({ all: true }).catch(() => []);
    await Promise.all(list.map((c) => client.getContainer(c.Id).remove({ force: true }).catch(() => {})));
    // No image (and so no layer) outlives a test: the next test's pull has to download.
    const images = await client.listImages({ all: true }).catch(() => []);
    for (const i of images) await client.getImage(i.Id).remove({ force: true }).catch(() => {});
    while (registries.length) await registries.pop()!.stop();
  });

  after(async function () {
    while (registries.length) await registries.pop()!.stop();
    for (const c of configs) rmSync(c, { recursive: true, force: true });
    await d?.stop();
  });

  /**
   * The whole CLI flow against one registry. When the registry demands a login, a wrong
   * password, an anonymous pull and a pull after logout are refused as well.
   */
  async function cliFlow(reg: TestRegistry) {
    const config = newConfig();
    const host = reg.host;
    const repo = `${host}/team/app`;
    const ref = `${repo}:1`;
    const auth = reg.auth !== "none";

    if (auth) {
      const wrong = await cli(config, ["login", "-u", USER, "--password-stdin", host], WRONG);
      expect(wrong.code, wrong.stderr).to.equal(1);
      expect(wrong.stderr).to.match(/Error response from daemon: .*unauthorized/i);
      expect(readConfigAuths(config)).to.not.have.property(host);
    }
    // Docker's daemon takes any login for a registry without authentication (GET /v2/ is 200).
    const login = await ok(config, ["login", "-u", USER, "--password-stdin", host], PASSWORD);
    expect(login.stdout).to.include("Login Succeeded");
    // The CLI keeps what it needs: the user and password, or (when the daemon got a refresh
    // token from the token server) the user and that identity token instead of the password.
    const saved = readConfigAuths(config)[host];
    if (saved?.identitytoken) {
      identityTokens.push(saved.identitytoken);
      expect(saved.auth).to.equal(Buffer.from(`${USER}:`).toString("base64"));
    } else {
      expect(saved?.auth).to.equal(Buffer.from(`${USER}:${PASSWORD}`).toString("base64"));
    }

    const id = await importBusybox(config);
    await ok(config, ["tag", id, ref]);
    const push = await ok(config, ["push", ref]);
    const pushLines = linesOf(push.stdout);
    expect(pushLines[0]).to.equal(`The push refers to repository [${repo}]`);
    expect(pushLines).to.satisfy((ls: string[]) => ls.some((l) => /^[0-9a-f]{12}: Pushed$/.test(l)), push.stdout);
    const final = /^1: digest: (sha256:[0-9a-f]{64}) size: (\d+)$/.exec(pushLines.at(-1)!);
    expect(final, push.stdout).to.not.equal(null);
    const digest = final![1];
    expect(await registryDigest(reg, "team/app", "1")).to.equal(digest);

    await ok(config, ["rmi", ref]);
    await ok(config, ["rmi", "-f", id]);
    const left = await ok(config, ["images", "-q"]);
    expect(left.stdout.trim()).to.equal("");

    if (auth) {
      // A client that never logged in: no credentials sent.
      const anon = await cli(newConfig(), ["pull", ref]);
      expect(anon.code, anon.stdout).to.equal(1);
      expect(anon.stderr).to.match(/Error response from daemon: .*(pull access denied|unauthorized|authentication required|no basic auth credentials)/i);
    }

    const pull = await ok(config, ["pull", ref]);
    const pullLines = linesOf(pull.stdout);
    expect(pullLines[0]).to.equal("1: Pulling from team/app");
    expect(pullLines.filter((l) => /^[0-9a-f]{12}: Pull complete$/.test(l)), pull.stdout).to.have.length(1);
    expect(pullLines).to.include(`Digest: ${digest}`);
    expect(pullLines).to.include(`Status: Downloaded newer image for ${ref}`);
    const again = await ok(config, ["pull", ref]);
    expect(linesOf(again.stdout)).to.include(`Status: Image is up to date for ${ref}`);
    expect(linesOf(again.stdout)).to.include(`Digest: ${digest}`);
    expect(again.stdout).to.not.include("Pull complete");

    const run = await ok(config, ["run", "--rm", "--network", "none", ref, "/bin/busybox", "echo", "ok"]);
    expect(run.stdout).to.equal("ok\n");

    // The same image once more: to the same repository its layer is there already; to another
    // repository of the same registry it is mounted from this one.
    await ok(config, ["tag", ref, `${repo}:2`]);
    const same = await ok(config, ["push", `${repo}:2`]);
    expect(linesOf(same.stdout), same.stdout).to.satisfy((ls: string[]) => ls.some((l) => /^[0-9a-f]{12}: Layer already exists$/.test(l)));
    expect(linesOf(same.stdout).at(-1)).to.equal(`2: digest: ${digest} size: ${final![2]}`);
    await ok(config, ["tag", ref, `${host}/team/other:1`]);
    const other = await ok(config, ["push", `${host}/team/other:1`]);
    expect(linesOf(other.stdout)[0]).to.equal(`The push refers to repository [${host}/team/other]`);
    expect(linesOf(other.stdout), other.stdout).to.satisfy((ls: string[]) => ls.some((l) => /^[0-9a-f]{12}: Mounted from team\/app$/.test(l)));
    expect(await registryDigest(reg, "team/other", "1")).to.equal(digest);

    const logout = await ok(config, ["logout", host]);
    expect(logout.stdout).to.include(`Removing login credentials for ${host}`);
    if (auth) {
      const after = await cli(config, ["pull", ref]);
      expect(after.code, after.stdout).to.equal(1);
      expect(after.stderr).to.match(/Error response from daemon: .*(pull access denied|unauthorized|authentication required|no basic auth credentials)/i);
    } else {
      await ok(config, ["pull", ref]);
    }
  }

  function readConfigAuths(config: string): Record<string, { auth?: string; identitytoken?: string }> {
    try {
      return (JSON.parse(readFileSync(join(config, "config.json"), "utf8")) as { auths?: Record<string, { auth?: string; identitytoken?: string }> }).auths ?? {};
    } catch {
      return {};
    }
  }

  describe("docker CLI", function () {
    it("no auth: login (taken), push, rmi, pull, up to date, run, Layer already exists, Mounted from", async function () {
      await cliFlow(await registry({ auth: "none" }));
    });

    it("htpasswd over TLS: wrong password refused, login, push, pull, run, mount; anonymous and logged-out pulls refused", async function () {
      await cliFlow(await registry({ auth: "htpasswd" }));
    });

    it("token server: wrong password refused, login, push, pull, run, mount; anonymous and logged-out pulls refused", async function () {
      const reg = await registry({ auth: "token", requireLogin: true });
      await cliFlow(reg);
      // The daemon asked the token server with the user's credentials, for push and pull scopes.
      expect(reg.token!.requests.some((r) => r.user === USER && r.scope.includes("repository:team/app:pull,push"))).to.equal(true);
      expect(reg.token!.requests.some((r) => r.user === USER && r.scope.includes("repository:team/app:pull"))).to.equal(true);
    });
  });

  describe("SDKs against the token registry", function () {
    it("dockerode: checkAuth, importImage, push with authconfig, pull with authconfig + followProgress, run", async function () {
      const reg = await registry({ auth: "token", requireLogin: true });
      const repo = `${reg.host}/team/node`;
      const authconfig = { username: USER, password: PASSWORD, serveraddress: reg.host };

      const wrong = await client.checkAuth({ ...authconfig, password: WRONG }).then(() => undefined, (e: { statusCode?: number; message: string }) => e);
      expect(wrong, "a wrong password must be refused").to.not.equal(undefined);
      expect(wrong!.statusCode).to.equal(401);
      expect(wrong!.message).to.match(/unauthorized/i);
      const login = (await client.checkAuth(authconfig)) as { Status: string };
      expect(login.Status).to.equal("Login Succeeded");

      const follow = (stream: NodeJS.ReadableStream) =>
        new Promise<Record<string, unknown>[]>((resolve, reject) => client.modem.followProgress(stream, (err: Error | null, out: Record<string, unknown>[]) => (err ? reject(err) : resolve(out))));
      const imported = await follow((await client.importImage(rootfsTar)) as NodeJS.ReadableStream);
      const id = imported.at(-1)!.status as string;
      expect(id).to.match(/^sha256:[0-9a-f]{64}$/);
      await client.getImage(id).tag({ repo, tag: "1" });

      const pushed = await follow((await client.getImage(repo).push({ tag: "1", authconfig })) as unknown as NodeJS.ReadableStream);
      expect(pushed.some((e) => e.status === "Pushed"), JSON.stringify(pushed)).to.equal(true);
      expect(pushed.some((e) => e.error)).to.equal(false);
      const aux = pushed.find((e) => e.aux)?.aux as { Tag: string; Digest: string; Size: number };
      expect(aux.Tag).to.equal("1");
      expect(await registryDigest(reg, "team/node", "1")).to.equal(aux.Digest);

      // The tag was the image's last name but the digest its push gave it: as with Docker's
      // daemon, the digest name goes with the tag, and the image with both.
      const removed = (await client.getImage(`${repo}:1`).remove()) as { Untagged?: string; Deleted?: string }[];
      expect(removed).to.deep.include.members([{ Untagged: `${repo}:1` }, { Untagged: `${repo}@${aux.Digest}` }, { Deleted: id }]);
      const gone = await client.getImage(id).inspect().then(() => undefined, (e: { statusCode?: number }) => e.statusCode);
      expect(gone).to.equal(404);

      // Without credentials: refused (anonymous tokens are refused by this token server).
      const anon = await client.pull(`${repo}:1`).then(() => undefined, (e: { statusCode?: number; message: string }) => e);
      expect(anon, "an anonymous pull must be refused").to.not.equal(undefined);
      expect(anon!.message).to.match(/pull access denied|unauthorized/i);

      const pulled = await follow(await client.pull(`${repo}:1`, { authconfig }));
      expect(pulled.some((e) => e.error), JSON.stringify(pulled)).to.equal(false);
      expect(pulled.filter((e) => e.status === "Pull complete")).to.have.length(1);
      expect(pulled.map((e) => e.status)).to.include(`Digest: ${aux.Digest}`).and.include(`Status: Downloaded newer image for ${repo}:1`);

      const c = await client.createContainer({ Image: `${repo}:1`, Cmd: ["/bin/busybox", "echo", "ok"], HostConfig: { NetworkMode: "none" } });
      await c.start();
      expect((await c.wait()).StatusCode).to.equal(0);
      const logs = (await c.logs({ stdout: true, stderr: true })) as unknown as Buffer;
      expect(logs.subarray(8).toString()).to.equal("ok\n");
      await c.remove({ force: true });
    });

    it("python3-docker: login, import, push with auth_config, pull, run; wrong password and anonymous pull refused", async function () {
      const probe = await runCommand("python3", ["-c", "import docker"], { timeoutMs: 20_000 });
      if (probe.code !== 0) this.skip(); // the Docker SDK for Python is not installed
      const reg = await registry({ auth: "token", requireLogin: true });
      const r = await runCommand("python3", [join(ROOT, "test/fixtures/python-registry-flow.py"), d.socket, reg.host, USER, PASSWORD, rootfsTar], {
        timeoutMs: 55_000,
        env: { DOCKER_CONFIG: newConfig(), DOCKER_HOST: undefined },
      });
      expect(r.code, `${r.stderr}\n${r.stdout}`).to.equal(0);
      const out = JSON.parse(linesOf(r.stdout).at(-1)!);
      const ref = `${reg.host}/team/py:1`;
      expect(out.wrong_login.status, r.stderr).to.equal(401);
      expect(out.wrong_login.explanation).to.match(/unauthorized/i);
      expect(out.login, r.stderr).to.equal("Login Succeeded");
      expect(out.imported, r.stderr).to.equal(true);
      expect(out.push, r.stderr).to.be.an("array");
      expect(out.push[0]).to.equal(`The push refers to repository [${reg.host}/team/py]`);
      expect(out.push.some((s: string) => /^[0-9a-f]{12}: Pushed$/.test(s)), JSON.stringify(out.push)).to.equal(true);
      expect(out.pushed_digest).to.match(/^sha256:[0-9a-f]{64}$/);
      expect(out.push.at(-1)).to.match(new RegExp(`^1: digest: ${out.pushed_digest} size: \\d+$`));
      expect(await registryDigest(reg, "team/py", "1")).to.equal(out.pushed_digest);
      expect(out.left_after_remove, r.stderr).to.deep.equal([]);
      expect(out.pull, r.stderr).to.be.an("array");
      expect(out.pull[0]).to.equal("1: Pulling from team/py");
      expect(out.pull.filter((s: string) => /^[0-9a-f]{12}: Pull complete$/.test(s))).to.have.length(1);
      expect(out.pull.slice(-2)).to.deep.equal([`Digest: ${out.pushed_digest}`, `Status: Downloaded newer image for ${ref}`]);
      expect(out.pull_image, r.stderr).to.deep.equal({ tags: [ref], repo_digests: [`${reg.host}/team/py@${out.pushed_digest}`] });
      expect(out.pull_again.at(-1), r.stderr).to.equal(`Status: Image is up to date for ${ref}`);
      expect(out.run, r.stderr).to.equal("ok\n");
      expect(out.anonymous_pull.status, r.stderr).to.equal(404);
      expect(out.anonymous_pull.explanation).to.match(/pull access denied/i);
    });
  });

  describe("more of the protocol", function () {
    it("a legacy v1-only registry is refused for pull, push and login", async function () {
      // Docker's v1 registry protocol has no real part to run here (Debian ships no v1 registry,
      // docker-registry 2.8 speaks v2 only), so this is a faithful fake of what one answers:
      // GET /v1/_ping 200 `{}` with X-Docker-Registry-Version, 404 for everything under /v2/.
      const seen: string[] = [];
      const server: Server = createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        if (req.method === "GET" && req.url === "/v1/_ping") {
          res.writeHead(200, { "content-type": "application/json", "x-docker-registry-version": "0.6.0" });
          res.end("{}");
          return;
        }
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
        res.end("404 page not found\n");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
        const config = newConfig();
        const gist = /Error response from daemon: .*speaks only the legacy v1 protocol/;
        const pull = await cli(config, ["pull", `${host}/team/app:1`]);
        expect(pull.code, pull.stdout).to.equal(1);
        expect(pull.stderr).to.match(gist);
        const id = await importBusybox(config);
        await ok(config, ["tag", id, `${host}/team/app:1`]);
        const push = await cli(config, ["push", `${host}/team/app:1`]);
        expect(push.code, push.stdout).to.equal(1);
        expect(push.stderr).to.match(gist);
        const login = await cli(config, ["login", "-u", USER, "--password-stdin", host], PASSWORD);
        expect(login.code, login.stdout).to.equal(1);
        expect(login.stderr).to.match(gist);
        expect(seen).to.include("GET /v2/").and.include("GET /v1/_ping");
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it("zstd: an OCI image with zstd layers pulls, and a container sees its files", async function () {
      const reg = await registry({ auth: "none" });
      const layers = [await busyboxRootfs(), await makeTar([{ name: "etc/hello", data: "hello from zstd\n" }])];
      const img = await pushImage(reg, "team/zstd", "1", layers, { format: "oci", compression: "zstd" });
      expect(img.layerBlobs[0].subarray(0, 4).toString("hex")).to.equal("28b52ffd"); // zstd's magic
      const config = newConfig();
      const ref = `${reg.host}/team/zstd:1`;
      const pull = await ok(config, ["pull", ref]);
      expect(linesOf(pull.stdout).filter((l) => /: Pull complete$/.test(l))).to.have.length(2);
      expect(pull.stdout).to.include(`Digest: ${img.manifestDigest}`);
      const inspect = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", `/v1.41/images/${encodeURIComponent(ref)}/json`)).body);
      expect(inspect.RootFS.Layers).to.deep.equal(img.diffIds);
      expect(inspect.Id).to.equal(img.configDigest);
      const run = await ok(config, ["run", "--rm", "--network", "none", ref, "/bin/busybox", "cat", "/etc/hello"]);
      expect(run.stdout).to.equal("hello from zstd\n");
    });

    it("docker pull prints what it prints against Docker's daemon; the JSON lines in Docker's order", async function () {
      this.timeout(110_000);
      const reg = await registry({ auth: "none" });
      const layers = [await busyboxRootfs(), await makeTar([{ name: "etc/", type: "directory" }, { name: "etc/cmp", data: "cmp\n" }])];
      const img = await pushImage(reg, "team/cmp", "1", layers);
      const ref = `${reg.host}/team/cmp:1`;
      const ids = img.layerDigests.map((x) => x.slice(7, 19));

      // 1. The JSON lines engined sends over the API, in Docker's order.
      const raw = await rawPull(d.socket, `${reg.host}/team/cmp`, "1");
      expect(raw.status, raw.text).to.equal(200);
      const lines = raw.lines;
      expect(lines[0]).to.deep.equal({ status: "Pulling from team/cmp", id: "1" });
      expect(lines.slice(-2)).to.deep.equal([{ status: `Digest: ${img.manifestDigest}` }, { status: `Status: Downloaded newer image for ${ref}` }]);
      const byLayer = statusesByLayer(lines);
      expect([...byLayer.keys()].sort()).to.deep.equal([...ids].sort());
      for (const id of ids) {
        expect(byLayer.get(id)!.filter((s) => s !== "Waiting"), id).to.deep.equal(["Pulling fs layer", "Downloading", "Verifying Checksum", "Download complete", "Extracting", "Pull complete"]);
      }
      // Every layer is announced before any download, and the base layer completes first.
      const firstDownload = lines.findIndex((l) => l.status === "Downloading");
      expect(lines.slice(0, firstDownload).filter((l) => l.status === "Pulling fs layer").map((l) => l.id)).to.deep.equal(ids);
      expect(lines.filter((l) => l.status === "Pull complete").map((l) => l.id)).to.deep.equal(ids);
      // The shapes of the messages, as Docker's daemon writes them.
      expect(lines.find((l) => l.status === "Pulling fs layer")).to.deep.equal({ status: "Pulling fs layer", progressDetail: {}, id: ids[0] });
      const downloading = lines.find((l) => l.status === "Downloading" && l.id === ids[0])!;
      expect(downloading.progressDetail).to.have.keys("current", "total");
      expect(downloading.progress).to.match(/^\[=*>\s*\]\s+\d+(\.\d+)?[kMG]?B\/\d+(\.\d+)?[kMG]?B$/);
      // Gone again (with its layers) for the CLI's pull.
      await client.getImage((await client.getImage(ref).inspect()).Id).remove({ force: true });

      // 2. `docker pull` (the CLI, not on a terminal): a line per status, Pull complete per layer.
      const config = newConfig();
      const mine = await ok(config, ["pull", ref]);
      expect(linesOf(mine.stdout).filter((l) => /^[0-9a-f]{12}: Pull complete$/.test(l)).map((l) => l.slice(0, 12)).sort()).to.deep.equal([...ids].sort());

      // 3. The same pull through Docker's own daemon, where it is installed: the same lines
      // (per layer in the same order; layers interleave by timing), the same digest and status.
      if (!have("dockerd") || !have("unshare") || !have("nsenter")) {
        this.skip(); // dockerd is not installed: no same-run comparison (parts 1 and 2 passed)
      }
      const dockerd = await startDockerd(reg);
      try {
        const theirs = await runCommand("docker", ["-H", `unix://${dockerd.socket}`, "pull", ref], {
          env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_CONFIG: newConfig() },
          timeoutMs: 60_000,
        });
        expect(theirs.code, `dockerd: ${theirs.stderr}`).to.equal(0);
        // Docker's daemon passes a layer's progress to the client through a broadcaster that
        // keeps only the latest message for a reader that is behind, so of the statuses between
        // "Pulling fs layer" and "Pull complete" (Waiting, Downloading, Verifying Checksum,
        // Download complete, Extracting) any may be missing from a given run of dockerd (seen:
        // "Verifying Checksum" missing one run, there the next). So: the lines that are not
        // about a layer are the same, the same layers are named, each layer's statuses run in
        // Docker's order from "Pulling fs layer" to "Pull complete" in both, the layers complete
        // in the same order, and engined's statuses per layer are all of Docker's, none missing.
        const mineShape = pullShape(mine.stdout);
        const theirShape = pullShape(theirs.stdout);
        expect(mineShape.other).to.deep.equal(theirShape.other);
        expect([...mineShape.layers.keys()].sort()).to.deep.equal([...theirShape.layers.keys()].sort());
        const completed = (text: string) => linesOf(text).filter((l) => l.endsWith(": Pull complete")).map((l) => l.slice(0, 12));
        expect(completed(mine.stdout)).to.deep.equal(completed(theirs.stdout));
        for (const id of ids) {
          for (const [who, seq] of [["engined", mineShape.layers.get(id)!], ["dockerd", theirShape.layers.get(id)!]] as const) {
            expect(inDockerOrder(seq), `${who} ${id}: ${seq.join(", ")}`).to.equal(true);
          }
          expect(mineShape.layers.get(id)!.filter((s) => s !== "Waiting"), id).to.deep.equal(["Pulling fs layer", "Verifying Checksum", "Download complete", "Pull complete"]);
        }
        // And the JSON lines over the API: the same lines not about a layer, each layer's
        // statuses in Docker's order from "Pulling fs layer" to "Pull complete" in both.
        const rm = await httpRequest({ socketPath: dockerd.socket }, "DELETE", `/v1.41/images/${encodeURIComponent(ref)}?force=1`);
        expect(rm.status, rm.body).to.equal(200);
        const rawTheirs = await rawPull(dockerd.socket, `${reg.host}/team/cmp`, "1");
        expect(rawTheirs.status, rawTheirs.text).to.equal(200);
        expect(lines.filter((l) => !l.id || l.id === "1")).to.deep.equal(rawTheirs.lines.filter((l) => !l.id || l.id === "1"));
        const theirsByLayer = statusesByLayer(rawTheirs.lines);
        expect([...theirsByLayer.keys()].sort()).to.deep.equal([...ids].sort());
        for (const id of ids) expect(inDockerOrder(theirsByLayer.get(id)!), `dockerd ${id}: ${theirsByLayer.get(id)!.join(", ")}`).to.equal(true);
        // The message shapes are the same for the statuses both sent.
        const shapeOf = (l: Record<string, unknown>) => Object.keys(l).sort().join(",") + (l.progressDetail ? `|${Object.keys(l.progressDetail as object).sort().join(",")}` : "");
        for (const st of ["Pulling fs layer", "Verifying Checksum", "Download complete", "Downloading", "Extracting", "Pull complete"]) {
          const theirsLine = rawTheirs.lines.find((l) => l.status === st);
          const mineLine = lines.find((l) => l.status === st);
          if (theirsLine && mineLine) expect(shapeOf(mineLine), st).to.equal(shapeOf(theirsLine));
        }
      } finally {
        await dockerd.stop();
      }
    });

    it("docker rmi of a pulled tag removes the image and its digest name, as against Docker's daemon; another tag keeps it", async function () {
      this.timeout(110_000);
      const reg = await registry({ auth: "none" });
      const img = await pushImage(reg, "team/rmi", "1", [await busyboxRootfs()]);
      const ref = `${reg.host}/team/rmi:1`;
      const byDigest = `${reg.host}/team/rmi@${img.manifestDigest}`;
      const config = newConfig();
      const removal = async (socket: string) => {
        const env = { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_CONFIG: config };
        const run = async (args: string[]) => {
          const r = await runCommand("docker", ["-H", `unix://${socket}`, ...args], { env, timeoutMs: 60_000 });
          expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
          return r.stdout;
        };
        await run(["pull", ref]);
        // a second tag of the same repository: only that tag goes
        await run(["tag", ref, `${reg.host}/team/rmi:2`]);
        const untag = await run(["rmi", `${reg.host}/team/rmi:2`]);
        // the last tag: the digest name goes with it, then the image and its layer
        const rmi = await run(["rmi", ref]);
        const left = await run(["images", "-a", "--digests", "--format", "{{.Repository}}@{{.Digest}} {{.ID}}"]);
        return { untag, rmi, left };
      };
      const mine = await removal(d.socket);
      expect(mine.untag).to.equal(`Untagged: ${reg.host}/team/rmi:2\n`);
      expect(linesOf(mine.rmi).slice(0, 3)).to.deep.equal([`Untagged: ${ref}`, `Untagged: ${byDigest}`, `Deleted: ${img.configDigest}`]);
      expect(linesOf(mine.rmi).slice(3)).to.deep.equal([`Deleted: ${img.diffIds[0]}`]); // a base layer's chain ID is its diff ID
      expect(mine.left).to.not.include("team/rmi");

      if (!have("dockerd") || !have("unshare") || !have("nsenter")) {
        this.skip(); // dockerd is not installed: no same-run comparison (engined's side passed)
      }
      const dockerd = await startDockerd(reg);
      try {
        const theirs = await removal(dockerd.socket);
        expect(mine.untag).to.equal(theirs.untag);
        expect(mine.rmi).to.equal(theirs.rmi);
        expect(theirs.left).to.not.include("team/rmi");
      } finally {
        await dockerd.stop();
      }
    });
  });

  describe("credentials", function () {
    it("never appear in the daemon's debug output", async function () {
      const out = d.output();
      expect(out.length, "the daemon logged at debug level").to.be.greaterThan(1000);
      // Debug level logs every API call: the logins and pulls with credentials went through it.
      const calls = out.split("\n").filter((l) => l.includes('msg="API call"'));
      expect(calls.some((l) => /level=debug .* method=POST url=\/auth\b/.test(l)), calls.join("\n")).to.equal(true);
      expect(calls.some((l) => /level=debug .* method=POST url="?\/images\/create\?fromImage=/.test(l)), calls.join("\n")).to.equal(true);
      expect(credentialLeaks(out, [PASSWORD, WRONG, ...identityTokens])).to.deep.equal([]);
    });
  });
});
