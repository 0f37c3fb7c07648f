/**
 * Registry clients against engined and a real registry (Debian's docker-registry 2.8.2): the
 * Docker CLI's `login`, `push`, `pull`, `logout` with each of the three set-ups (no auth;
 * htpasswd behind TLS; bearer tokens from the token server), dockerode and the Docker SDK for
 * Python against the token registry, cross-repository mounts, a legacy v1-only registry refused,
 * and no credential in the daemon's debug log after all of them. zstd layers and `docker pull`
 * and `docker rmi` compared with Docker's own daemon are in registry-clients-pull.test.ts.
 */
import "./helpers/root-hooks.js";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { ROOT, runCommand } from "./helpers/engined.js";
import type { TestRegistry } from "./helpers/registry.js";
import { clientSuite, linesOf } from "./helpers/registry-clients.js";
import { MEDIA, RegistrySession } from "./fixtures/registry-push.js";

const USER = "tester";
const PASSWORD = "s3cret-pass";
const WRONG = "wrong-pass-7Qx";
const ACCEPT = [MEDIA.dockerManifest, MEDIA.dockerList, MEDIA.ociManifest, MEDIA.ociIndex].join(", ");

/** The digest the registry serves for a tag (authenticating as it demands). */
async function registryDigest(reg: TestRegistry, repo: string, ref: string): Promise<string> {
  const s = new RegistrySession(reg, repo, reg.auth === "none" ? undefined : reg.users[0], "pull");
  const res = await s.fetch("GET", `/v2/${repo}/manifests/${ref}`, { headers: { accept: ACCEPT } });
  expect(res.status, res.body.toString()).to.equal(200);
  return String(res.headers["docker-content-digest"]);
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

describe("registry clients: docker CLI, dockerode, python3-docker", function () {
  this.timeout(60_000);
  const suite = clientSuite();
  const { newConfig, cli, ok, registry, importBusybox } = suite;
  /** Identity tokens (refresh tokens) logins gave: credentials too. */
  const identityTokens: string[] = [];

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
      // a registry that asks for a user and password names the refusal as Docker's daemon does
      if (reg.auth === "htpasswd") expect(wrong.stderr).to.include(`Error response from daemon: login attempt to https://${host}/v2/ failed with status: 401 Unauthorized`);
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
      // Docker's client sends no request without the credentials a basic challenge asks for (and
      // the CLI, which asks for a login at the terminal on a 401, is not answered one)
      if (reg.auth === "htpasswd") expect(anon.stderr).to.include(`Error response from daemon: Head "https://${host}/v2/team/app/manifests/1": no basic auth credentials`);
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
      if (reg.auth === "htpasswd") {
        const push = await cli(config, ["push", ref]);
        expect(push.code, push.stdout).to.equal(1);
        expect(linesOf(push.stderr).at(-1), push.stdout + push.stderr).to.equal("no basic auth credentials");
      }
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
      const { client, rootfsTar } = suite;
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
      const { d, rootfsTar } = suite;
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
        // a push's stream has begun (its first line names the repository) before the registry is asked
        expect(linesOf(push.stdout)[0]).to.equal(`The push refers to repository [${host}/team/app]`);
        expect(push.stderr).to.match(/speaks only the legacy v1 protocol/);
        const login = await cli(config, ["login", "-u", USER, "--password-stdin", host], PASSWORD);
        expect(login.code, login.stdout).to.equal(1);
        expect(login.stderr).to.match(gist);
        expect(seen).to.include("GET /v2/").and.include("GET /v1/_ping");
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe("credentials", function () {
    it("never appear in the daemon's debug output", async function () {
      const { d } = suite;
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
