/**
 * `engine context ...` next to the Docker CLI's `docker context ...`: each client with a
 * configuration folder of its own (ENGINE_CONFIG, DOCKER_CONFIG) and a working folder of its own,
 * the same command lines through both, exit statuses and outputs compared (program names, the
 * ENGINE_/DOCKER_ variables, the default sockets and the two folders made alike); the files both
 * write (meta.json, TLS files, config.json) compared byte for byte; exports of each imported by
 * the other; and which daemon answers under -H, ENGINE_HOST, --context, ENGINE_CONTEXT and
 * config.json's currentContext, against a real engined (and a socket path nothing listens on),
 * and through a context's TLS files against an engined that requires client certificates.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { ENGINE, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";

/** One side of a comparison: its configuration folder and its working folder. */
interface Side {
  config: string;
  cwd: string;
}

interface Pair {
  docker: Side;
  engine: Side;
}

function makePair(): Pair {
  const root = makeTempDir("engine-cli-context-");
  const side = (name: string): Side => {
    const s = { config: join(root, name, "config"), cwd: join(root, name, "cwd") };
    mkdirSync(s.cwd, { recursive: true });
    return s;
  };
  return { docker: side("docker"), engine: side("engine") };
}

/** Variables of one client: `HOST` and `CONTEXT` become DOCKER_HOST / ENGINE_HOST and so on. */
type ClientEnv = Record<string, string | undefined>;

const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

function envFor(prefix: "DOCKER" | "ENGINE", side: Side, env: ClientEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...NO_PROXY_ENV, [`${prefix}_CONFIG`]: side.config };
  for (const v of ["HOST", "CONTEXT", "TLS_VERIFY", "CERT_PATH", "API_VERSION"]) out[`${prefix}_${v}`] = undefined;
  for (const [k, v] of Object.entries(env)) out[`${prefix}_${k}`] = v;
  return out;
}

function runDocker(p: Pair, args: string[], env: ClientEnv = {}, input?: string | Buffer): Promise<RunResult> {
  return runCommand("docker", args, { env: envFor("DOCKER", p.docker, env), cwd: p.docker.cwd, input, timeoutMs: 30_000 });
}

function runEngine(p: Pair, args: string[], env: ClientEnv = {}, input?: string | Buffer): Promise<RunResult> {
  return runCommand(ENGINE, args, { env: envFor("ENGINE", p.engine, env), cwd: p.engine.cwd, input, timeoutMs: 30_000 });
}

/** What a user sees, with what differs by design between the two clients made alike. */
function normalized(p: Pair, r: RunResult) {
  const n = (t: string) =>
    t
      .split(p.docker.config).join("<config>")
      .split(p.engine.config).join("<config>")
      .split(p.docker.cwd).join("<cwd>")
      .split(p.engine.cwd).join("<cwd>")
      .replace(/\b(docker|engine)\b/g, "PROG")
      .replace(/Docker/g, "PROG")
      .replace(/\b(DOCKER|ENGINE)_/g, "PROG_");
  return { code: r.code, stdout: n(r.stdout), stderr: n(r.stderr) };
}

/** Runs `args` through both clients (the Docker CLI first); their results must match. */
async function same(p: Pair, args: string[], env: ClientEnv = {}, input?: string | Buffer): Promise<RunResult> {
  const d = await runDocker(p, args, env, input);
  const e = await runEngine(p, args, env, input);
  expect(normalized(p, e), `engine ${args.join(" ")}`).to.deep.equal(normalized(p, d));
  return e;
}

/** Every file and folder under `dir`, relative, with its type and (for files) bytes. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        out[relative(dir, path)] = "dir";
        walk(path);
      } else out[relative(dir, path)] = readFileSync(path, "latin1");
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/** The two context stores hold the same files, byte for byte (names are the names' sha256). */
function sameStores(p: Pair): void {
  const d = tree(join(p.docker.config, "contexts"));
  const e = tree(join(p.engine.config, "contexts"));
  expect(Object.keys(e).sort()).to.deep.equal(Object.keys(d).sort());
  for (const k of Object.keys(d)) {
    expect(e[k].replace(/ENGINE_HOST|engine\.sock/g, (m) => (m === "ENGINE_HOST" ? "DOCKER_HOST" : "docker.sock")), k).to.equal(d[k]);
  }
}

/** Every folder of engine's store is 0700 and every file 0600: TLS keys are in it. */
function privateStore(p: Pair): void {
  const root = join(p.engine.config, "contexts");
  const walk = (d: string) => {
    expect(statSync(d).mode & 0o777, d).to.equal(0o700);
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else expect(statSync(path).mode & 0o777, path).to.equal(0o600);
    }
  };
  walk(root);
}

const configJson = (s: Side) => (existsSync(join(s.config, "config.json")) ? readFileSync(join(s.config, "config.json"), "utf8") : undefined);

/** A CA, a certificate it signed and its key, in `dir`; and a file that is not PEM. */
function makeTlsFiles(dir: string): void {
  const openssl = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=one", "-keyout", "key.pem", "-out", "cert.pem"]);
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=two", "-keyout", "key2.pem", "-out", "cert2.pem"]);
  writeFileSync(join(dir, "ca.pem"), readFileSync(join(dir, "cert.pem")));
  writeFileSync(join(dir, "junk.pem"), "junk\n");
}

describe("engine CLI: contexts, compared with the Docker CLI's", function () {
  this.timeout(120_000);

  describe("create, ls, inspect, show, use, rm", function () {
    const p = makePair();

    it("create: from --docker, --from, the current context; every refusal", async function () {
      await same(p, ["context", "ls"]);
      await same(p, ["context", "create", "aa", "--docker", "host=unix:///tmp/x.sock", "--description", "hello <world> & more"]);
      await same(p, ["context", "create", "aa", "--docker", "host=unix:///tmp/x.sock"]);
      await same(p, ["context", "create", "bb"]);
      await same(p, ["context", "create", "cc", "--from", "aa"]);
      await same(p, ["context", "create", "ff", "--docker", "from=aa"]);
      await same(p, ["context", "create", "hh", "--docker", "host=tcp://1.2.3.4,skip-tls-verify=true", "--description", "x"]);
      await same(p, ["context", "create", "ssh1", "--docker", "host=ssh://u@h"]);
      await same(p, ["context", "create", "tcp1", "--docker", "host=tcp://h:1,host=tcp://k:2"]);
      await same(p, ["context", "create", "v6", "--docker", "host=tcp://[::1]:3"]);
      await same(p, ["context", "create", "nohost", "--docker", "skip-tls-verify=1"]);
      // pflag's stringToString: one "=" is one pair, commas and all; repeated flags add up
      await same(p, ["context", "create", "comma", "--docker", "host=unix:///a,b"]);
      await same(p, ["context", "create", "twice", "--docker", "host=tcp://h:1", "--docker", "skip-tls-verify=true"]);
      for (const bad of [
        ["default"],
        ["b@d"],
        ["x"],
        ["-bad"],
        ["dd", "--from", "nope"],
        ["ee", "--from", "aa", "--docker", "host=tcp://1.2.3.4:2375"],
        ["gg", "--docker", "from=nope"],
        ["xx", "--docker", "foo=bar"],
        ["xx", "--docker", "nothing"],
        ["xx", "--docker", "skip-tls-verify=yes"],
        ["xx", "--docker", "ca=/nonexistent"],
        ["xx", "--docker", "host=h:2375"],
        ["xx", "--docker", "host=/abs"],
        ["xx", "--docker", "host=://"],
        ["xx", "--docker", "host=ssh://"],
        ["xx", "--docker", "host=ssh://u:p@h"],
        ["xx", "--docker", "host=tcp://h:x"],
        ["xx", "--docker", "host=tcp://a b:1"],
        ["xx", "--docker", "host=npipe:////./pipe/x"],
        ["xx", "--docker", "host=fd://"],
        ["xx", "--bogus"],
        [],
        ["a1", "a2"],
      ]) {
        const r = await same(p, ["context", "create", ...bad]);
        expect(r.code, bad.join(" ")).to.not.equal(0);
      }
      sameStores(p);
      privateStore(p);
    });

    it("ls: the table, -q, json, templates, the errors", async function () {
      const table = await same(p, ["context", "ls"]);
      expect(table.stdout).to.match(/^NAME +DESCRIPTION +DOCKER ENDPOINT +ERROR\n/);
      expect(table.stdout).to.match(/^default \* +Current ENGINE_HOST based configuration +unix:\/\/\/var\/run\/engine\.sock/m);
      await same(p, ["context", "ls", "-q"]);
      await same(p, ["context", "list", "--format", "json"]);
      await same(p, ["context", "ls", "--format", "{{json .}}"]);
      await same(p, ["context", "ls", "--format", "{{.Name}} {{.Current}} {{.Description}} {{.DockerEndpoint}} {{.Error}}"]);
      await same(p, ["context", "ls", "--format", "table {{.Name}}\t{{.Current}}"]);
      await same(p, ["context", "ls", "--format", "{{.Nope}}"]);
      await same(p, ["context", "ls", "--format", "{{"]);
      await same(p, ["context", "ls", "extra"]);
      // -H and ENGINE_HOST make the default context theirs; ENGINE_HOST is warned about
      await same(p, ["-H", "tcp://1.2.3.4:5", "context", "ls"]);
      await same(p, ["context", "ls"], { HOST: "tcp://1.2.3.4:6" });
      // a current context that is not there is listed, with why
      const missing = await same(p, ["--context", "nope", "context", "ls"]);
      expect(missing.stdout).to.match(/^nope \* +context "nope": context not found: open .*…$/m);
    });

    it("inspect: JSON, json, templates on the CLI's types, what is not there", async function () {
      const all = await same(p, ["context", "inspect", "aa", "default", "hh"]);
      expect(JSON.parse(all.stdout)[0].Metadata).to.deep.equal({ Description: "hello <world> & more" });
      await same(p, ["context", "inspect"]);
      await same(p, ["context", "inspect", "-f", "json", "aa", "default"]);
      await same(p, ["context", "inspect", "nope"]);
      await same(p, ["context", "inspect", "aa", "nope", "aa"]);
      await same(p, ["context", "inspect", "b@d"]);
      for (const format of [
        "{{json .}}",
        "{{.}}",
        "{{.Name}} {{.Endpoints.docker.Host}} {{.Metadata}}",
        "{{json .Metadata}} {{json .Endpoints}} {{.Endpoints}} {{json .Storage}} {{.Endpoints.nope}}",
        "{{json .Metadata.Metadata}} {{.Metadata.Metadata}} {{.Metadata.Metadata.Description}}",
        "{{.Storage.MetadataPath}} {{.Storage.TLSPath}} {{.TLSMaterial}}",
        "{{.Nope}}",
        "{{.Metadata.Nope}}",
        "{{",
      ]) {
        await same(p, ["context", "inspect", "-f", format, "aa", "default"]);
      }
      await same(p, ["-H", "1.2.3.4", "context", "inspect", "-f", "{{json .}}"]);
      await same(p, ["-H", "ssh://u@h:2222", "context", "inspect", "-f", "{{.Endpoints.docker.Host}}"]);
    });

    it("use and show: currentContext in config.json, the precedence of --context, ENGINE_CONTEXT and ENGINE_HOST", async function () {
      await same(p, ["context", "show"]);
      await same(p, ["context", "use", "default"]);
      expect(configJson(p.engine), "use of the default context with no config.json writes none").to.equal(undefined);
      await same(p, ["context", "use", "aa"]);
      expect(configJson(p.engine)).to.equal(configJson(p.docker)).and.equal('{\n\t"auths": {},\n\t"currentContext": "aa"\n}');
      await same(p, ["context", "show"]);
      await same(p, ["context", "inspect", "-f", "{{.Name}}"]);
      await same(p, ["context", "ls", "-q"]);
      await same(p, ["context", "show"], { CONTEXT: "bb" });
      await same(p, ["--context", "cc", "context", "show"], { CONTEXT: "bb" });
      await same(p, ["-c", "cc", "context", "show"], { HOST: "unix:///x.sock" });
      await same(p, ["context", "show"], { CONTEXT: "bb", HOST: "unix:///x.sock" });
      await same(p, ["-H", "unix:///x.sock", "context", "show"]);
      await same(p, ["-H", "unix:///x.sock", "--context", "bb", "context", "show"]);
      await same(p, ["context", "use", "bb"], { HOST: "unix:///x.sock" });
      for (const bad of [["nope"], ["b@d"], [], ["a1", "a2"]]) await same(p, ["context", "use", ...bad]);
      await same(p, ["context", "show", "extra"]);
      await same(p, ["context", "use", "default"]);
      expect(configJson(p.engine)).to.equal(configJson(p.docker)).and.equal('{\n\t"auths": {}\n}');
    });

    it("rm: the current one only with -f (which makes default current), default never, errors together", async function () {
      await same(p, ["context", "use", "aa"]);
      await same(p, ["context", "rm", "aa"]);
      await same(p, ["context", "rm", "default"]);
      await same(p, ["context", "rm", "nope"]);
      await same(p, ["context", "rm", "nope", "aa", "cc", "default"]);
      await same(p, ["context", "remove", "-f", "nope"]);
      await same(p, ["context", "rm", "-f", "aa"]);
      expect(configJson(p.engine)).to.equal(configJson(p.docker)).and.equal('{\n\t"auths": {}\n}');
      await same(p, ["context", "show"]);
      await same(p, ["context", "rm"]);
      await same(p, ["context", "rm", "-x", "bb"]);
      sameStores(p);
      // a current context (from config.json) that is not there goes with -f, and config.json with it
      for (const s of [p.docker, p.engine]) writeFileSync(join(s.config, "config.json"), '{"currentContext":"gone"}');
      await same(p, ["context", "rm", "-f", "gone"]);
      expect(configJson(p.engine)).to.equal(configJson(p.docker));
    });

    it("engine context: the group's commands", async function () {
      await same(p, ["context"]);
      await same(p, ["context", "--help"]);
    });
  });

  describe("TLS material, update, export and import", function () {
    const p = makePair();
    const files = makeTempDir("engine-cli-context-tls-");
    before(function () {
      makeTlsFiles(files);
      // encrypted PEM keys are refused: "support for encrypted private keys has been removed"
      execFileSync("openssl", ["genrsa", "-aes128", "-passout", "pass:x", "-traditional", "-out", "enc.pem", "2048"], { cwd: files, stdio: ["ignore", "ignore", "pipe"] });
    });
    const f = (name: string) => join(files, name);

    it("create with ca, cert and key: the files stored as the Docker CLI stores them; what does not load is refused", async function () {
      await same(p, ["context", "create", "t1", "--docker", `host=tcp://127.0.0.1:2376,ca=${f("ca.pem")},cert=${f("cert.pem")},key=${f("key.pem")}`, "--description", "x<y"]);
      await same(p, ["context", "create", "t5", "--docker", `host=unix:///x,ca=${f("junk.pem")}`]);
      await same(p, ["context", "create", "t6", "--docker", `host=tcp://127.0.0.1:2376,key=${f("key.pem")}`]);
      await same(p, ["context", "create", "t7", "--docker", `ca=${f("ca.pem")}`]);
      await same(p, ["context", "create", "t8", "--docker", `host=ssh://h,ca=${f("junk.pem")}`]);
      for (const [ca, cert, key] of [
        ["junk.pem", "", ""],
        ["", "cert.pem", "junk.pem"],
        ["", "junk.pem", "key.pem"],
        ["", "cert2.pem", "key.pem"],
        ["", "cert.pem", "enc.pem"],
      ]) {
        const opts = [`host=tcp://127.0.0.1:2376`, ca && `ca=${f(ca)}`, cert && `cert=${f(cert)}`, key && `key=${f(key)}`].filter(Boolean).join(",");
        const r = await same(p, ["context", "create", "bad", "--docker", opts]);
        expect(r.code, opts).to.equal(1);
      }
      await same(p, ["context", "inspect", "t1", "t5", "t6", "t7"]);
      await same(p, ["context", "create", "t9", "--from", "t1"]);
      await same(p, ["context", "create", "t10", "--docker", "from=t1"]);
      await same(p, ["context", "inspect", "-f", "{{.Name}} {{.TLSMaterial}} {{json .TLSMaterial}}", "t9", "t10", "t5"]);
      sameStores(p);
      privateStore(p);
    });

    it("update: the description, the endpoint and its TLS files; what cannot be updated", async function () {
      await same(p, ["context", "update", "t1", "--description", "new"]);
      await same(p, ["context", "update", "t9", "--description", ""]);
      await same(p, ["context", "update", "t9", "--docker", "host=tcp://127.0.0.1:1"]);
      await same(p, ["context", "update", "t6"]);
      await same(p, ["context", "update", "t7", "--docker", `host=tcp://h:3,cert=${f("cert.pem")},key=${f("key.pem")}`]);
      for (const bad of [["default", "--description", "x"], ["nope", "--description", "x"], ["b@d"], ["t1", "--docker", "foo=bar"], []]) {
        await same(p, ["context", "update", ...bad]);
      }
      await same(p, ["context", "inspect", "t1", "t6", "t7", "t9"]);
      sameStores(p);
    });

    it("export: Docker's tar (the same bytes, then a proper end); to a file, never over one, and not to a terminal", async function () {
      await same(p, ["context", "export", "t1"]);
      await same(p, ["context", "export", "t1"]);
      await same(p, ["context", "export", "t1", "out.tar"]);
      await same(p, ["context", "export", "default"]);
      await same(p, ["context", "export", "nope", "nope.tar"]);
      await same(p, ["context", "export", "b@d", "x"]);
      await same(p, ["context", "export"]);
      const d = readFileSync(join(p.docker.cwd, "t1.dockercontext"));
      const e = readFileSync(join(p.engine.cwd, "t1.dockercontext"));
      // the Docker CLI's stops after the last file's data; ours goes on with its padding and two zero blocks
      expect(e.subarray(0, d.length).equals(d)).to.equal(true);
      expect(e.length % 512).to.equal(0);
      expect(e.subarray(d.length).every((b) => b === 0)).to.equal(true);
      expect(statSync(join(p.engine.cwd, "t1.dockercontext")).mode & 0o777).to.equal(0o600);
      expect(execFileSync("tar", ["tf", join(p.engine.cwd, "t1.dockercontext")], { encoding: "utf8" })).to.equal("meta.json\ntls\ntls/docker\ntls/docker/ca.pem\ntls/docker/cert.pem\ntls/docker/key.pem\n");
      // to stdout: the same bytes
      const out = execFileSync(ENGINE, ["context", "export", "t1", "-"], { env: { ...process.env, ...envFor("ENGINE", p.engine, {}) } });
      expect(out.equals(e)).to.equal(true);
      // not to a terminal
      const inTerminal = await Promise.all([
        inPty(["docker", "context", "export", "t1", "-"], { env: envFor("DOCKER", p.docker, {}) }),
        inPty([ENGINE, "context", "export", "t1", "-"], { env: envFor("ENGINE", p.engine, {}) }),
      ]);
      for (const t of inTerminal) expect(t).to.deep.equal({ code: 1, output: "cowardly refusing to export to a terminal, specify a file path\r\n" });
    });

    it("import: each client reads the other's export, from a file or stdin; a zip of the same files; what is not an export", async function () {
      const dockerTar = join(p.docker.cwd, "t1.dockercontext");
      const engineTar = join(p.engine.cwd, "t1.dockercontext");
      let r = await runEngine(p, ["context", "import", "fromdocker", dockerTar]);
      expect(r.code, r.stderr).to.equal(0);
      r = await runDocker(p, ["context", "import", "fromengine", engineTar]);
      expect(r.code, r.stderr).to.equal(0);
      r = await runDocker(p, ["context", "import", "fromdocker", "-"], {}, readFileSync(dockerTar));
      expect(r.code, r.stderr).to.equal(0);
      r = await runEngine(p, ["context", "import", "fromengine", "-"], {}, readFileSync(engineTar));
      expect(r.code, r.stderr).to.equal(0);
      await same(p, ["context", "import", "again", "t1.dockercontext"]);
      await same(p, ["context", "import", "again", "t1.dockercontext"]);
      await same(p, ["context", "import", "default", "t1.dockercontext"]);
      await same(p, ["context", "import", "b@d", "t1.dockercontext"]);
      await same(p, ["context", "import", "junk", "/etc/passwd"]);
      await same(p, ["context", "import", "junk", "/nonexistent"]);
      await same(p, ["context", "import", "junk", "-"], {}, "");
      await same(p, ["context", "import", "junk"]);
      // the same files zipped (as the Docker CLI also imports)
      const unpacked = makeTempDir("engine-cli-context-zip-");
      execFileSync("tar", ["xmf", engineTar], { cwd: unpacked }); // m: times of now (zip has no 1970)
      execFileSync("python3", ["-c", "import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED)\nfor n in sys.argv[2:]: z.write(n)\nz.close()", "c.zip", "meta.json", "tls", "tls/docker", "tls/docker/ca.pem", "tls/docker/cert.pem", "tls/docker/key.pem"], { cwd: unpacked });
      await same(p, ["context", "import", "zipped", join(unpacked, "c.zip")]);
      await same(p, ["context", "inspect", "fromdocker", "fromengine", "again", "zipped"]);
      sameStores(p);
      privateStore(p);
    });
  });

  describe("which daemon answers", function () {
    const p = makePair();
    let daemon: TestDaemon;
    let live: string;
    let dead: string;

    before(async function () {
      daemon = await startEngined();
      live = `unix://${daemon.socket}`;
      dead = `unix://${join(makeTempDir("engine-cli-context-dead-"), "nothing.sock")}`;
      // what the live daemon lists tells it from any other
      const r = await runEngine(p, ["-H", live, "volume", "create", "ctx-marker"]);
      expect(r.code, r.stderr).to.equal(0);
      for (const [name, host] of [["live", live], ["dead", dead]]) {
        await same(p, ["context", "create", name, "--docker", `host=${host}`]);
      }
    });
    after(async function () {
      await daemon?.stop();
    });

    /** `volume ls -q` through both clients; "live" when the live daemon answered, else the error. */
    const answer = async (args: string[], env: ClientEnv = {}) => {
      const r = await same(p, [...args, "volume", "ls", "-q"], env);
      return r.code === 0 && r.stdout === "ctx-marker\n" ? "live" : `${r.code}: ${r.stderr.trim()}`;
    };
    const refused = (socket: string) => `1: Cannot connect to the engine daemon at ${socket}. Is the engine daemon running?`;
    const setCurrent = async (name: string) => expect((await same(p, ["context", "use", name])).code).to.equal(0);

    it("config.json's currentContext, then ENGINE_CONTEXT over it, then --context over both", async function () {
      await setCurrent("dead");
      expect(await answer([])).to.equal(refused(dead));
      expect(await answer([], { CONTEXT: "live" })).to.equal("live");
      expect(await answer(["--context", "live"], { CONTEXT: "dead" })).to.equal("live");
      await setCurrent("live");
      expect(await answer([])).to.equal("live");
      expect(await answer(["-c", "dead"])).to.equal(refused(dead));
    });

    it("-H and ENGINE_HOST over the current context and ENGINE_CONTEXT; --context over ENGINE_HOST; -H with --context refused", async function () {
      await setCurrent("live");
      expect(await answer(["-H", dead])).to.equal(refused(dead));
      expect(await answer([], { HOST: dead })).to.equal(refused(dead));
      expect(await answer([], { HOST: dead, CONTEXT: "live" })).to.equal(refused(dead));
      expect(await answer(["--context", "live"], { HOST: dead })).to.equal("live");
      await setCurrent("dead");
      expect(await answer(["-H", live])).to.equal("live");
      expect(await answer([], { HOST: live })).to.equal("live");
      expect(await answer(["--context", "default", "-H", live])).to.equal("1: conflicting options: cannot specify both --host and --context");
      expect(await answer(["-H", live, "-c", "live"])).to.equal("1: conflicting options: cannot specify both --host and --context");
      await setCurrent("default");
    });

    it("a context that is not there: commands that connect fail, the others do not", async function () {
      const r = await answer(["--context", "gone"]);
      expect(r).to.match(/^1: Failed to initialize: unable to resolve docker endpoint: context "gone": context not found: open .*meta\.json: no such file or directory$/);
      expect(await answer([], { CONTEXT: "gone" })).to.equal(r);
      await same(p, ["--context", "gone", "context", "show"]);
      await same(p, ["--context", "gone", "logout"]);
    });
  });

  describe("a context's TLS files, against an engined that requires a client certificate", function () {
    const p = makePair();
    let certs: CertSet;
    let daemon: TestDaemon;
    let host: string;

    before(async function () {
      certs = makeCerts(join(makeTempDir("engine-cli-context-certs-"), "certs"));
      daemon = await startEngined({
        hosts: ["tcp://127.0.0.1:0"],
        args: ["--tlsverify", "--tlscacert", certs.ca, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey],
      });
      const tcp = daemon.addresses().find((a) => a.startsWith("tcp://"));
      expect(tcp, daemon.output()).to.be.a("string");
      host = tcp!;
      const client = (name: string) => join(certs.clientDir, name);
      const rogue = (name: string) => join(certs.rogueDir, name);
      // ENGINE_CERT_PATH and DOCKER_CERT_PATH are unset: the files the context holds are the only ones used
      await same(p, ["context", "create", "mtls", "--docker", `host=${host},ca=${client("ca.pem")},cert=${client("cert.pem")},key=${client("key.pem")}`]);
      await same(p, ["context", "create", "rogue", "--docker", `host=${host},ca=${client("ca.pem")},cert=${rogue("cert.pem")},key=${rogue("key.pem")}`]);
      await same(p, ["context", "create", "plain", "--docker", `host=${host}`]);
    });
    after(async function () {
      await daemon?.stop();
    });

    it("the context's CA, certificate and key are used; another CA's client and plain HTTP are refused", async function () {
      const ok = await same(p, ["--context", "mtls", "volume", "ls", "-q"]);
      expect(ok.code, ok.stderr).to.equal(0);
      for (const name of ["rogue", "plain"]) {
        const d = await runDocker(p, ["--context", name, "volume", "ls", "-q"]);
        const e = await runEngine(p, ["--context", name, "volume", "ls", "-q"]);
        expect([e.code, d.code], `${name}: ${e.stderr}`).to.deep.equal([1, 1]);
      }
    });
  });
});
