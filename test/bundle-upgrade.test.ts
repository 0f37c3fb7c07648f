/**
 * A daemon and its supervisor outlive builds and upgrades of the code they were started from
 * (the supervisor outlives the daemon by design), and load chunks of their bundle long after
 * their start: a pull's code, a log driver's. They hold their own build's files open from the
 * start (core/chunk-loader.cts), and a build renames its outputs into place
 * (scripts/bundle-engined.mjs). Here a copy of the built tree runs the daemon; once it and its
 * supervisor run, every file of the copy's bundle is renamed away and replaced by one that throws,
 * as a build of other code would leave it; a pull and containers with log drivers neither process
 * had loaded still work. (Before: a 500 for the ENOENT of a chunk a later build had removed.)
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { cpSync, mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("a daemon whose bundle a later build replaced", function () {
  this.timeout(120_000);
  let d: TestDaemon | undefined;

  after(async function () {
    await d?.stop();
  });

  it("goes on loading its own build's chunks: a pull, and log drivers in its supervisor", async function () {
    const copy = makeTempDir("engine-upgrade-");
    for (const part of ["bin", "dist", "package.json"]) cpSync(join(ROOT, part), join(copy, part), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    // the copy's engined runs in place of the tree's (wrap execs it with the daemon's flags)
    d = await startEngined({ wrap: ["sh", "-c", `shift; exec ${join(copy, "bin/engined")} "$@"`, "sh"] });
    const host = `unix://${d.socket}`;
    const cli = async (...args: string[]) => {
      const r = await docker(host, args);
      expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
      return r.stdout;
    };
    await cli("import", writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox");
    // the supervisor starts with the first container
    expect(await cli("run", "--rm", "busybox", "echo", "first")).to.equal("first\n");

    const bundle = join(copy, "dist/engined-bundle");
    const old = join(copy, "old-build");
    mkdirSync(old);
    for (const file of readdirSync(bundle).filter((f) => f.endsWith(".cjs"))) {
      renameSync(join(bundle, file), join(old, file));
      writeFileSync(join(bundle, file), 'throw new Error("a file of another build");\n');
    }

    // a pull's code (the registry client), which the start did not load
    const pull = await docker(host, ["pull", "127.0.0.1:1/none"]);
    expect(pull.code).to.equal(1);
    expect(pull.stderr).to.match(/dial tcp 127\.0\.0\.1:1: connect: /);
    // log drivers the supervisor had not loaded
    expect(await cli("run", "--rm", "--log-driver", "local", "busybox", "echo", "local")).to.equal("local\n");
    await cli("run", "--name", "viajson", "--log-driver", "json-file", "--log-opt", "max-size=1m", "busybox", "echo", "json");
    expect(await cli("logs", "viajson")).to.equal("json\n");
    expect(d.output()).to.not.include("another build");
  });
});
