/**
 * The image-transfer and registry-login commands of `engine` (pull, push, login, logout, save,
 * load, import, commit) against a real engined and real registries on 127.0.0.1 (Debian's
 * docker-registry: one without authentication, one with htpasswd behind TLS), each output
 * compared with what the Docker CLI prints against the same daemon and registry.
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { request } from "undici";
import { ENGINE, engine, engineInPty, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const USER = "tester";
const PASSWORD = "s3cret-pass";
const ESC = "\x1b[";

/** Lines of an output, without empty ones. */
const linesOf = (text: string) => text.split("\n").map((l) => l.trimEnd()).filter(Boolean);

/**
 * A pull as a terminal showed it, reduced to what does not depend on timing: each in-place
 * update (it ends with "cursor down") with its bar and counts replaced by a mark, and a run of
 * identical updates (the daemon sends as many byte updates as time allows) counted once.
 */
function terminalShape(output: string): string[] {
  const marked = output.replace(/(Downloading|Extracting|Pushing) +\[[=> ]*\] +[\d.]+[kMGT]?B\/[\d.]+[kMGT]?B[^\r]*/g, "$1 <bar>");
  const parts = marked.split(`${ESC}1B`);
  return parts.filter((p, i) => i === 0 || p !== parts[i - 1]);
}

describe("engine CLI: pull, push, login, logout, save, load, import, commit", function () {
  this.timeout(90_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let rootfsTar: string;
  const registries: TestRegistry[] = [];
  const configs: string[] = [];

  /** A private config folder (for engine or docker), removed after the run. */
  const newConfig = () => {
    const dir = mkdtempSync(join(tmpdir(), "engine-cli-images-config-"));
    configs.push(dir);
    return dir;
  };

  /** The Docker CLI against engined with this config folder. */
  const docker = (config: string, args: string[], input?: string): Promise<RunResult> =>
    runCommand("docker", ["-H", host, ...args], {
      env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined, DOCKER_CONFIG: config },
      timeoutMs: 60_000,
      input,
    });

  const eng = (config: string, args: string[], input?: string) => engine(host, args, { configDir: config, input, timeoutMs: 60_000 });

  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}:\n${r.stderr}\n${r.stdout}`).to.equal(0);
    return r;
  };

  const registry = async (opts: Parameters<typeof startRegistry>[0] = {}) => {
    const reg = await startRegistry(opts);
    registries.push(reg);
    return reg;
  };

  /** Imports the busybox root filesystem (with the Docker CLI) and tags it: the image ID. */
  const busybox = async (ref?: string) => {
    const config = newConfig();
    const id = ok(await docker(config, ["import", "--change", 'CMD ["sh"]', rootfsTar]), "docker import").stdout.trim();
    expect(id).to.match(/^sha256:[0-9a-f]{64}$/);
    if (ref) ok(await docker(config, ["tag", id, ref]), "docker tag");
    return id;
  };

  /** Every image of the daemon removed: the next pull downloads again. */
  const removeAllImages = async () => {
    const config = newConfig();
    const ids = linesOf((await docker(config, ["images", "-aq"])).stdout);
    if (ids.length) await docker(config, ["rmi", "-f", ...new Set(ids)]);
    expect(linesOf((await docker(config, ["images", "-aq"])).stdout)).to.deep.equal([]);
  };

  /** Pushes busybox to `ref` with the Docker CLI (the engine push is checked on its own). */
  const seed = async (ref: string, config = newConfig()) => {
    await busybox(ref);
    ok(await docker(config, ["push", ref]), "docker push");
  };

  before(async function () {
    work = makeTempDir("engine-cli-images-");
    rootfsTar = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    host = `unix://${d.socket}`;
  });

  afterEach(async function () {
    if (!d) return;
    const config = newConfig();
    const containers = linesOf((await docker(config, ["ps", "-aq"])).stdout);
    if (containers.length) await docker(config, ["rm", "-f", ...containers]);
    await removeAllImages();
    while (registries.length) await registries.pop()!.stop();
  });

  after(async function () {
    while (registries.length) await registries.pop()!.stop();
    for (const c of configs) rmSync(c, { recursive: true, force: true });
    await d?.stop();
  });

  it("push to a registry without auth, pull back: the non-terminal output is docker pull's line for line", async function () {
    const reg = await registry();
    const repo = `${reg.host}/team/app`;
    const ref = `${repo}:1`;
    const config = newConfig();
    await busybox(ref);

    const push = ok(await eng(config, ["push", ref]), "engine push");
    const pushed = linesOf(push.stdout);
    expect(pushed[0]).to.equal(`The push refers to repository [${repo}]`);
    expect(pushed, push.stdout).to.satisfy((ls: string[]) => ls.some((l) => /^[0-9a-f]{12}: Pushed$/.test(l)));
    // no byte counts without a terminal
    expect(push.stdout).to.not.match(/Pushing/);
    const digest = /^1: digest: (sha256:[0-9a-f]{64}) size: \d+$/.exec(pushed.at(-1)!)?.[1];
    expect(digest, push.stdout).to.be.a("string");
    // once more: the Docker CLI and engine print the same for a push with nothing to upload
    const again = ok(await eng(config, ["push", ref]), "engine push again");
    expect(again.stdout).to.equal(ok(await docker(config, ["push", ref]), "docker push").stdout);
    expect(again.stdout).to.match(/: Layer already exists\n/);
    const quiet = ok(await eng(config, ["push", "-q", ref]), "engine push -q");
    expect(quiet.stdout).to.equal(`${ref}\n`);

    // The Docker CLI's pull first, then engine's, each into an empty daemon.
    await removeAllImages();
    const dockerPull = ok(await docker(config, ["pull", ref]), "docker pull");
    await removeAllImages();
    const enginePull = ok(await eng(config, ["pull", ref]), "engine pull");
    expect(enginePull.stdout).to.equal(dockerPull.stdout);
    expect(enginePull.stderr).to.equal("");
    const lines = linesOf(enginePull.stdout);
    expect(lines[0]).to.equal("1: Pulling from team/app");
    expect(lines).to.include(`Digest: ${digest}`);
    expect(lines).to.include(`Status: Downloaded newer image for ${ref}`);
    expect(lines.at(-1)).to.equal(ref);
    expect(enginePull.stdout).to.not.match(/Downloading|Extracting/);

    // up to date, quiet, all tags, default tag: as the Docker CLI
    for (const args of [["pull", ref], ["pull", "-q", ref], ["pull", "-a", repo], ["pull", repo], ["pull", "-a", ref]]) {
      const e = await eng(config, args);
      const k = await docker(config, args);
      expect({ code: e.code, stdout: e.stdout, stderr: e.stderr }, args.join(" ")).to.deep.equal({ code: k.code, stdout: k.stdout, stderr: k.stderr });
    }
  });

  it("pull of a missing tag, a missing repository and a bad name: the Docker CLI's message and exit code", async function () {
    const reg = await registry();
    await seed(`${reg.host}/team/app:1`);
    const config = newConfig();
    for (const ref of [`${reg.host}/team/app:nope`, `${reg.host}/team/none:1`, `${reg.host}/Team/App:1`]) {
      const e = await eng(config, ["pull", ref]);
      const k = await docker(config, ["pull", ref]);
      expect(e.code, e.stderr).to.equal(1);
      expect({ code: e.code, stdout: e.stdout, stderr: e.stderr }, ref).to.deep.equal({ code: k.code, stdout: k.stdout, stderr: k.stderr });
    }
    const missing = await eng(config, ["pull", `${reg.host}/team/app:nope`]);
    expect(missing.stderr).to.equal(`Error response from daemon: manifest for ${reg.host}/team/app:nope not found: manifest unknown: manifest unknown\n`);
    // a push of an image that is not there
    const push = await eng(config, ["push", `${reg.host}/team/nothing`]);
    const dockerPush = await docker(config, ["push", `${reg.host}/team/nothing`]);
    expect({ code: push.code, stdout: push.stdout, stderr: push.stderr }).to.deep.equal({ code: dockerPush.code, stdout: dockerPush.stdout, stderr: dockerPush.stderr });
    expect(push.code).to.equal(1);
  });

  it("a pull whose stream ends in an error (a corrupted blob): the errorDetail message, status 1, as the Docker CLI", async function () {
    const reg = await registry();
    await seed(`${reg.host}/team/broken:1`);
    await removeAllImages();
    const res = await request(`${reg.url}/v2/team/broken/manifests/1`, { dispatcher: reg.dispatcher, headers: { accept: "application/vnd.docker.distribution.manifest.v2+json" } });
    const manifest = (await res.body.json()) as { layers: { digest: string; size: number }[] };
    const layer = manifest.layers[0];
    writeFileSync(reg.blobPath(layer.digest), randomBytes(layer.size));
    const config = newConfig();
    const e = await eng(config, ["pull", `${reg.host}/team/broken:1`]);
    const k = await docker(config, ["pull", `${reg.host}/team/broken:1`]);
    expect(e.code, e.stdout).to.equal(1);
    expect(e.stderr).to.not.match(/^Error response from daemon/);
    expect(e.stderr).to.match(/digest|checksum|verif/i);
    expect({ code: e.code, stderr: e.stderr }).to.deep.equal({ code: k.code, stderr: k.stderr });
    // the progress before the error is there too, and no final reference line
    expect(linesOf(e.stdout)[0]).to.equal("1: Pulling from team/broken");
    expect(e.stdout).to.not.include(`${reg.host}/team/broken:1\n`);
  });

  it("pull in a pseudo-terminal: one line per layer rewritten in place with bars, as the Docker CLI draws it", async function () {
    const reg = await registry();
    const ref = `${reg.host}/team/app:1`;
    await seed(ref);
    await removeAllImages();
    const config = newConfig();
    const dockerPty = await inPty(["docker", "-H", host, "pull", ref], { env: { DOCKER_CONFIG: config, DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined }, cols: 120, timeoutMs: 60_000 });
    expect(dockerPty.code, dockerPty.output).to.equal(0);
    await removeAllImages();
    const enginePty = await engineInPty(host, ["pull", ref], { configDir: config, cols: 120, timeoutMs: 60_000 });
    expect(enginePty.code, enginePty.output).to.equal(0);
    const out = enginePty.output;
    // the layer's line: a new line, then cursor up, erase, the status, cursor down
    expect(out).to.include(`${ESC}1A${ESC}2K\r`);
    expect(out).to.include(`${ESC}1B`);
    expect(out).to.match(/[0-9a-f]{12}: Downloading \[=*>\s*\] +[\d.]+[kM]?B\/[\d.]+[kM]?B\r/);
    expect(out).to.match(/[0-9a-f]{12}: Pull complete \r/);
    expect(linesOf(out.replace(/\r\n/g, "\n")).at(-1)).to.equal(ref);
    expect(terminalShape(out)).to.deep.equal(terminalShape(dockerPty.output));

    // a narrow terminal (up to 110 columns) shows the counts without the bar, as Docker's CLI does
    await removeAllImages();
    const narrow = await engineInPty(host, ["pull", ref], { configDir: config, cols: 80, timeoutMs: 60_000 });
    expect(narrow.code, narrow.output).to.equal(0);
    expect(narrow.output).to.match(/: Downloading +[\d.]+[kM]?B\/[\d.]+[kM]?B\r/);
    expect(narrow.output).to.not.match(/Downloading \[/);
  });

  it("htpasswd over TLS: login saves config.json as docker login does, push and pull use it, logout removes it", async function () {
    const reg = await registry({ auth: "htpasswd" });
    const repo = `${reg.host}/team/secret`;
    const ref = `${repo}:1`;
    const engineConfig = newConfig();
    const dockerConfig = newConfig();

    // a wrong password: the same refusal, nothing saved
    const wrong = await eng(engineConfig, ["login", "-u", USER, "--password-stdin", reg.host], "wrong-pass\n");
    const dockerWrong = await docker(dockerConfig, ["login", "-u", USER, "--password-stdin", reg.host], "wrong-pass\n");
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.equal(dockerWrong.stderr);
    expect(wrong.stderr).to.match(/^Error response from daemon: .*unauthorized/i);
    expect(existsSync(join(engineConfig, "config.json")) ? readFileSync(join(engineConfig, "config.json"), "utf8") : "").to.not.include(reg.host);

    const login = ok(await eng(engineConfig, ["login", "-u", USER, "--password-stdin", reg.host], `${PASSWORD}\n`), "engine login");
    expect(login.stdout).to.equal("Login Succeeded\n");
    ok(await docker(dockerConfig, ["login", "-u", USER, "--password-stdin", reg.host], `${PASSWORD}\n`), "docker login");
    const saved = readFileSync(join(engineConfig, "config.json"), "utf8");
    expect(saved).to.equal(readFileSync(join(dockerConfig, "config.json"), "utf8"));
    expect(JSON.parse(saved)).to.deep.equal({ auths: { [reg.host]: { auth: Buffer.from(`${USER}:${PASSWORD}`).toString("base64") } } });
    expect(statSync(join(engineConfig, "config.json")).mode & 0o777).to.equal(0o600);

    // -p warns on stderr as the Docker CLI does
    const withP = ok(await eng(engineConfig, ["login", "-u", USER, "-p", PASSWORD, reg.host]), "engine login -p");
    expect(withP.stderr).to.equal("WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n");
    expect(withP.stdout).to.equal("Login Succeeded\n");

    await busybox(ref);
    const push = ok(await eng(engineConfig, ["push", ref]), "engine push with saved credentials");
    expect(linesOf(push.stdout)).to.satisfy((ls: string[]) => ls.some((l) => /^[0-9a-f]{12}: Pushed$/.test(l)), push.stdout);
    await removeAllImages();

    // without credentials the registry refuses
    const anonymous = await eng(newConfig(), ["pull", ref]);
    expect(anonymous.code).to.equal(1);
    expect(anonymous.stderr).to.match(/^Error response from daemon: .*(unauthorized|authentication required|no basic auth credentials)/i);
    const pull = ok(await eng(engineConfig, ["pull", ref]), "engine pull with saved credentials");
    expect(linesOf(pull.stdout)).to.include(`Status: Downloaded newer image for ${ref}`);

    // logout: the Docker CLI's message, and the file as docker logout leaves it
    const logout = ok(await eng(engineConfig, ["logout", reg.host]), "engine logout");
    expect(logout.stdout).to.equal(`Removing login credentials for ${reg.host}\n`);
    ok(await docker(dockerConfig, ["logout", reg.host]), "docker logout");
    expect(readFileSync(join(engineConfig, "config.json"), "utf8")).to.equal(readFileSync(join(dockerConfig, "config.json"), "utf8"));
    expect(JSON.parse(readFileSync(join(engineConfig, "config.json"), "utf8"))).to.deep.equal({ auths: {} });
    await removeAllImages();
    const after = await eng(engineConfig, ["pull", ref]);
    expect(after.code).to.equal(1);
    // logging out again says the same as the Docker CLI
    const twice = await eng(engineConfig, ["logout", reg.host]);
    expect({ code: twice.code, stdout: twice.stdout }).to.deep.equal({ code: (await docker(dockerConfig, ["logout", reg.host])).code, stdout: `Removing login credentials for ${reg.host}\n` });
  });

  it("login keeps what else config.json holds (credsStore, credHelpers, other keys); its usage errors are the Docker CLI's", async function () {
    const reg = await registry({ auth: "htpasswd" });
    const config = newConfig();
    const others = { auths: { "other.example:5000": { auth: "eDp5" } }, credsStore: "desktop", credHelpers: { "gcr.io": "gcloud" }, psFormat: "table {{.ID}}" };
    writeFileSync(join(config, "config.json"), JSON.stringify(others, null, "\t"));
    ok(await eng(config, ["login", "-u", USER, "--password-stdin", reg.host], PASSWORD), "engine login");
    const after = JSON.parse(readFileSync(join(config, "config.json"), "utf8"));
    expect(after).to.deep.equal({ ...others, auths: { ...others.auths, [reg.host]: { auth: Buffer.from(`${USER}:${PASSWORD}`).toString("base64") } } });
    ok(await eng(config, ["logout", reg.host]), "engine logout");
    expect(JSON.parse(readFileSync(join(config, "config.json"), "utf8"))).to.deep.equal(others);

    for (const args of [["login", "-u", USER, reg.host], ["login", "-p", "x", "--password-stdin", reg.host], ["login", "--password-stdin", reg.host]]) {
      const e = await eng(newConfig(), args, "");
      const k = await docker(newConfig(), args, "");
      expect({ code: e.code, stdout: e.stdout, stderr: e.stderr }, args.join(" ")).to.deep.equal({ code: k.code, stdout: k.stdout, stderr: k.stderr });
    }
  });

  it("save -o then load -i: the same image back; save to stdout is the same archive; save to a terminal is refused", async function () {
    const ref = "saved/app:1";
    const id = await busybox(ref);
    const config = newConfig();
    const archive = join(work, "saved.tar");
    ok(await eng(config, ["save", "-o", archive, ref]), "engine save -o");
    expect(statSync(archive).mode & 0o777).to.equal(0o600);
    const entries = execFileSync("tar", ["-tf", archive], { encoding: "utf8" });
    expect(linesOf(entries)).to.include("manifest.json");
    // stdout into a file (not a terminal): the same bytes
    const piped = join(work, "piped.tar");
    execFileSync("sh", ["-c", `"$0" -H "$1" save "$2" > "$3"`, ENGINE, host, ref, piped], { env: { ...process.env, ENGINE_CONFIG: config } });
    expect(readFileSync(piped).equals(readFileSync(archive))).to.equal(true);

    const missingDir = await eng(config, ["save", "-o", "/nonexistent-dir/x.tar", ref]);
    const dockerMissingDir = await docker(config, ["save", "-o", "/nonexistent-dir/x.tar", ref]);
    expect({ code: missingDir.code, stderr: missingDir.stderr }).to.deep.equal({ code: dockerMissingDir.code, stderr: dockerMissingDir.stderr });

    await removeAllImages();
    const load = ok(await eng(config, ["load", "-i", archive]), "engine load -i");
    expect(load.stdout).to.equal(`Loaded image: ${ref}\n`);
    const inspect = ok(await docker(config, ["image", "inspect", "--format", "{{.Id}}", ref]), "docker image inspect");
    expect(inspect.stdout.trim()).to.equal(id);

    const missing = await eng(config, ["load", "-i", join(work, "absent.tar")]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal(`open ${join(work, "absent.tar")}: no such file or directory\n`);

    const tty = await engineInPty(host, ["save", ref], { configDir: config });
    expect(tty.code).to.equal(1);
    expect(tty.output).to.include("cowardly refusing to save to a terminal. Use the -o flag or redirect");
    const dockerTty = await inPty(["docker", "-H", host, "save", ref], { env: { DOCKER_CONFIG: config } });
    expect(tty.output).to.equal(dockerTty.output);
  });

  it("import from a tar file with -c 'CMD [\"sh\"]' and -m; from stdin; a missing file as the Docker CLI says it", async function () {
    const config = newConfig();
    const r = ok(await eng(config, ["import", "-c", 'CMD ["sh"]', "-c", "ENV PATH=/bin", "-m", "imported by engine", rootfsTar, "imported/app:1"]), "engine import");
    const id = r.stdout.trim();
    expect(id).to.match(/^sha256:[0-9a-f]{64}$/);
    const inspect = JSON.parse(ok(await docker(config, ["image", "inspect", "imported/app:1"]), "inspect").stdout)[0];
    expect(inspect.Id).to.equal(id);
    expect(inspect.Config.Cmd).to.deep.equal(["sh"]);
    expect(inspect.Config.Env).to.include("PATH=/bin");
    expect(inspect.Comment).to.equal("imported by engine");
    const run = ok(await docker(config, ["run", "--rm", "--network", "none", "imported/app:1", "echo", "ok"]), "docker run");
    expect(run.stdout).to.equal("ok\n");

    const viaStdin = execFileSync("sh", ["-c", `"$0" -H "$1" import - imported/stdin:1 < "$2"`, ENGINE, host, rootfsTar], { env: { ...process.env, ENGINE_CONFIG: config }, encoding: "utf8" });
    expect(viaStdin.trim()).to.match(/^sha256:[0-9a-f]{64}$/);

    for (const args of [["import", join(work, "absent.tar")], ["import", rootfsTar, "Bad/Name"]]) {
      const e = await eng(config, args);
      const k = await docker(config, args);
      expect({ code: e.code, stdout: e.stdout, stderr: e.stderr }, args.join(" ")).to.deep.equal({ code: k.code, stdout: k.stdout, stderr: k.stderr });
    }
  });

  it("commit: the new image's ID once the daemon has POST /commit; until then a clear message and status 1", async function () {
    await busybox("commit/base:1");
    const config = newConfig();
    const created = ok(await docker(config, ["create", "--network", "none", "commit/base:1", "sh"]), "docker create");
    const container = created.stdout.trim();
    const probe = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/commit?container=no-such-container-xyz");
    const supported = !(probe.status === 404 && /page not found/i.test(String(probe.body)));

    const r = await eng(config, ["commit", "-a", "Engine Tests", "-m", "a commit", "-c", 'CMD ["echo", "hi"]', container, "committed/app:1"]);
    if (supported) {
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.match(/^sha256:[0-9a-f]{64}$/);
      const inspect = JSON.parse(ok(await docker(config, ["image", "inspect", "committed/app:1"]), "inspect").stdout)[0];
      expect(inspect.Author).to.equal("Engine Tests");
      expect(inspect.Config.Cmd).to.deep.equal(["echo", "hi"]);
    } else {
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal("");
      expect(r.stderr).to.equal("engine commit: the daemon does not support commit (POST /commit answered 404 page not found)\n");
    }
    // a container that does not exist is the daemon's own 404, not "unsupported"
    const none = await eng(config, ["commit", "no-such-container-xyz"]);
    expect(none.code).to.equal(1);
    if (supported) expect(none.stderr).to.match(/^Error response from daemon: No such container: no-such-container-xyz/);
  });
});
