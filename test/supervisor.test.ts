/**
 * The supervisor process with real conmon and runc: containers run, wait, log, stop and go;
 * and a supervisor killed with SIGKILL while a container runs is started again by the next
 * engined and finds the container, its exit code and every line of its output.
 */
import "./helpers/root-hooks.js";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { ensureSupervisor, type SupervisorHandle } from "../host/supervisor/launch.js";
import { SupervisorClientError } from "../host/supervisor/client.js";
import { makeTempDir } from "./helpers/engined.js";
import { BUSYBOX, hasCommand, makeBundle, makeBusyboxRootfs, removeCgroups, RUNC, runcDefaultSpec } from "./helpers/busybox-bundle.js";

describe("supervisor", function () {
  this.timeout(30_000);
  let dir: string;
  let execRoot: string;
  let rootfs: string;
  let spec: Record<string, any>;
  const started: number[] = [];
  const ids: string[] = [];
  let sup: SupervisorHandle;

  const kill = (pid: number) => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  };

  before(async function () {
    if (process.getuid?.() !== 0 || !RUNC || !BUSYBOX || !hasCommand("conmon")) this.skip();
    dir = makeTempDir("engine-supervisor-");
    execRoot = `${dir}/exec`;
    rootfs = makeBusyboxRootfs(dir);
    spec = runcDefaultSpec(dir);
    sup = await ensureSupervisor({ execRoot, namespace: "test" });
    expect(sup.startedPid).to.be.a("number");
    started.push(sup.startedPid!);
  });

  after(async () => {
    for (const id of ids) {
      await sup?.client.remove(id, true).catch(() => undefined);
      removeCgroups(id);
    }
    await sup?.client.close();
    for (const pid of started) kill(pid);
  });

  const run = async (args: string[]) => {
    const id = `sup-${randomBytes(5).toString("hex")}`;
    ids.push(id);
    await sup.client.run({ id, bundle: makeBundle(dir, id, rootfs, spec, args), runtime: { path: RUNC! } });
    return id;
  };

  it("is found again, not started twice, by a second engined", async () => {
    const again = await ensureSupervisor({ execRoot, namespace: "test" });
    expect(again.startedPid).to.equal(undefined);
    expect((await again.client.ping()).namespace).to.equal("test");
    await again.client.close();
  });

  it("runs a container, waits for its exit code and returns its output", async () => {
    const id = await run(["sh", "-c", "echo hi; echo oops >&2; exit 3"]);
    expect(await sup.client.wait(id)).to.equal(3);
    const logs = await sup.client.logs(id);
    expect(logs.map((l) => `${l.stream}:${l.line}`)).to.deep.equal(["stdout:hi", "stderr:oops"]);
    expect((await sup.client.get(id)).status).to.equal("exited");
  });

  it("stops, kills and removes, with the statuses engined maps to HTTP", async () => {
    const id = await run(["sleep", "100"]);
    expect((await sup.client.get(id)).status).to.equal("running");
    const conflict = await sup.client.remove(id).catch((e: SupervisorClientError) => e);
    expect(conflict).to.be.instanceOf(SupervisorClientError);
    expect((conflict as SupervisorClientError).status).to.equal(409);
    expect(await sup.client.stop(id, 1)).to.equal(137);
    await sup.client.remove(id);
    const gone = await sup.client.get(id).catch((e: SupervisorClientError) => e);
    expect((gone as SupervisorClientError).status).to.equal(404);
    const bad = await sup.client.run({ id: "../x", bundle: "/x", runtime: { path: RUNC! } }).catch((e: SupervisorClientError) => e);
    expect((bad as SupervisorClientError).status).to.equal(400);
  });

  it("keeps every line and the exit code of a container across a SIGKILL of the supervisor", async () => {
    const id = await run(["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; sleep 0.1; done"]);
    await new Promise((r) => setTimeout(r, 250));
    kill(sup.startedPid!);
    await sup.client.close();
    // The container goes on without any supervisor; the next engined starts a new one.
    await new Promise((r) => setTimeout(r, 300));
    sup = await ensureSupervisor({ execRoot, namespace: "test" });
    expect(sup.startedPid).to.be.a("number");
    started.push(sup.startedPid!);
    expect(await sup.client.wait(id)).to.equal(0);
    const lines = (await sup.client.logs(id)).map((l) => l.line);
    expect(lines).to.deep.equal(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`));
    expect((await sup.client.list()).map((c) => c.id)).to.include(id);
  });
});
