/**
 * bin/engined's process tuning (see its comments and host/restore-env.ts): the daemon runs with
 * glibc's malloc on transparent huge pages, and the processes it starts get the environment as
 * it was before bin/engined, a GLIBC_TUNABLES of the caller's included.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

function environ(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean)) out.set(kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1));
  return out;
}

describe("daemon process tuning", function () {
  this.timeout(120_000);

  for (const caller of [undefined, "glibc.malloc.arena_max=2"]) {
    describe(caller ? `with the caller's GLIBC_TUNABLES=${caller}` : "without a GLIBC_TUNABLES of the caller's", () => {
      let d: TestDaemon;
      const host = () => `unix://${d.socket}`;

      before(async () => {
        const env: NodeJS.ProcessEnv = { GLIBC_TUNABLES: caller };
        if (caller === undefined) delete env.GLIBC_TUNABLES;
        d = await startEngined({ env });
        const dir = makeTempDir("engine-tuning-");
        const imported = await docker(host(), ["import", writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox"]);
        expect(imported.code, imported.stderr).to.equal(0);
      });

      after(async () => {
        await docker(host(), ["rm", "-f", "tuned"]).catch(() => undefined);
        await d?.stop();
      });

      it("runs the daemon with malloc on huge pages (its own environment, from its start)", () => {
        // (the collector's flags do not show: the daemon's process title overwrites its command line)
        // (glibc may rewrite the variable in place as it reads it: the tuning comes first)
        expect(environ(d.proc.pid!).get("GLIBC_TUNABLES")).to.match(/^glibc\.malloc\.hugetlb=1(:|$)/);
      });

      it("starts its processes (the supervisor) with the environment as the caller had it", async () => {
        const run = await docker(host(), ["run", "-d", "--name", "tuned", "--network", "none", "busybox", "sleep", "60"]);
        expect(run.code, run.stderr).to.equal(0);
        const supervisor = Number(readFileSync(join(d.dir, "exec", "supervisor", "supervisor.pid"), "utf8").trim());
        const env = environ(supervisor);
        expect(env.get("GLIBC_TUNABLES")).to.equal(caller);
        expect(env.has("ENGINE_GLIBC_TUNABLES_WAS")).to.equal(false);
      });
    });
  }
});
