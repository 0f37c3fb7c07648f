/**
 * Every kill point of the container operations: for create, start, run (create and start of a
 * `--rm` container, through its exit and removal), stop and rm, engined is killed with SIGKILL
 * at each step the operation passes, in turn (core/kill-points.ts), started again on the same
 * roots, and checked (helpers/kill-checks.ts): every container listed in a true state, a
 * container that was started running or exited with its real exit code and every line it
 * printed once in its json-file log, no layer without its record or the other way round, no
 * mount, sandbox, address or temporary file left. The daemon runs in a network namespace of its
 * own with its default bridge, so that the containers' networks are part of what is checked.
 */
import "./helpers/root-hooks.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { busyboxRootfs } from "./fixtures/images.js";
import { everyStep, KillBed, reportTrials } from "./helpers/kill-bed.js";
import { containerRecords, settledProblems } from "./helpers/kill-checks.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";
import { checkJsonFiles } from "./helpers/numbered-lines.js";

const LINES = 200;
const CODE = 7;
const ZERO_TIME = "0001-01-01T00:00:00Z";
/** Lines as helpers/numbered-lines.ts checks them: 8 digits, a space, filler to 100 bytes with the newline. */
const print = `awk 'BEGIN { f = sprintf("%90s", ""); gsub(/ /, "x", f); for (i = 1; i <= ${LINES}; i++) printf "%08d %s\\n", i, f }'`;
/** Prints its lines, runs a moment, exits with CODE. */
const EXITS = ["sh", "-c", `${print}; sleep 0.5; exit ${CODE}`];
/** Prints its lines, then runs until SIGTERM, which it answers with exit 3. */
const STOPS = ["sh", "-c", `trap 'exit 3' TERM; ${print}; while true; do sleep 0.1; done`];

describe("kill points: containers", function () {
  this.timeout(900_000);
  let ns: Netns;
  let bed: KillBed;
  let serial = 0;

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    ns = makeNetns();
    bed = new KillBed({ netns: ns });
    await bed.start();
    const changes = ['CMD ["sh"]', "ENV PATH=/bin"].map((c) => `changes=${encodeURIComponent(c)}`).join("&");
    const imported = await bed.send("POST", `/images/create?fromSrc=-&repo=busybox&tag=latest&${changes}`, await busyboxRootfs());
    expect(imported.status, imported.body).to.equal(200);
  });

  after(async () => {
    if (bed?.d) {
      await removeAll().catch(() => undefined);
      await bed.stop();
    }
    ns?.remove();
    if (bed) reportTrials("containers", bed);
  });

  async function create(cmd: string[], autoRemove = false): Promise<string> {
    const body = { Image: "busybox", Cmd: cmd, Volumes: { "/data": {} }, HostConfig: { AutoRemove: autoRemove } };
    return (await bed.ok<{ Id: string }>("POST", `/containers/create?name=kc${++serial}`, body)).Id;
  }

  async function removeAll(): Promise<void> {
    for (const c of await bed.ok<{ Id: string }[]>("GET", "/containers/json?all=1")) {
      const r = await bed.api("DELETE", `/containers/${c.Id}?force=1&v=1`);
      if (r.status !== 204 && r.status !== 404) throw new Error(`rm ${c.Id}: ${r.status} ${r.body}`);
    }
    await bed.ok("POST", "/volumes/prune?filters=" + encodeURIComponent(JSON.stringify({ all: ["true"] })));
  }

  async function waitExit(id: string): Promise<number> {
    const r = await bed.api("POST", `/containers/${id}/wait`);
    return (JSON.parse(r.body) as { StatusCode: number }).StatusCode;
  }

  /**
   * What a container that may have been started must show: never started (its log empty), or
   * running or exited with `code`, and once it has exited, every line once in its log.
   */
  async function expectTrueRun(id: string, code: number, why: string): Promise<void> {
    const r = await bed.api("GET", `/containers/${id}/json`);
    if (r.status === 404) return;
    const state = (JSON.parse(r.body) as { State: { Status: string; Running: boolean; ExitCode: number; StartedAt: string } }).State;
    const log = join(bed.dataRoot, "containers", id, `${id}-json.log`);
    const ran = existsSync(log) || state.StartedAt !== ZERO_TIME;
    if (!ran) {
      expect(state.Status, `${why}: a container that never ran`).to.equal("created");
      return;
    }
    expect(state.Status, `${why}: a container that ran (its log has lines)`).to.be.oneOf(["running", "exited"]);
    if (state.Status === "running" && code === 3) await bed.ok("POST", `/containers/${id}/stop?t=10`);
    expect(await waitExit(id), `${why}: its exit code`).to.equal(code);
    const check = await checkJsonFiles([log]);
    expect(check.errors, `${why}: its log`).to.deep.equal([]);
    expect([check.first, check.last, check.lines], `${why}: its log`).to.deep.equal([1, LINES, LINES]);
  }

  /** The operation's trials (helpers/kill-bed.ts), the daemon's containers and volumes removed after each. */
  const trials = <T>(name: string, prepare: () => Promise<T>, op: (subject: T) => Promise<unknown>, after: (subject: T, why: string) => Promise<void>) =>
    everyStep(bed, { name, prepare, op, after, cleanup: removeAll, problems: () => settledProblems(bed, ns) });

  it("create", async () => {
    const steps = await trials("create", async () => "", () => create(EXITS), async (_id, why) => {
      for (const [id, c] of containerRecords(bed)) expect(c.State.Status, `${why}: ${id}`).to.equal("created");
    });
    expect(steps).to.include.members(["create.volumes-made", "create.layer-made", "create.saved"]);
  });

  it("start", async () => {
    const steps = await trials("start", () => create(EXITS), (id) => bed.ok("POST", `/containers/${id}/start`), (id, why) => expectTrueRun(id, CODE, why));
    expect(steps).to.include.members(["start.rootfs-mounted", "start.network-attached", "start.supervisor-ran", "start.saved"]);
  });

  it("run --rm: create, start, exit, removal", async () => {
    const run = async () => {
      const id = await create(EXITS, true);
      await bed.ok("POST", `/containers/${id}/start`);
      // as `docker run --rm` waits: until the container is gone
      await bed.api("POST", `/containers/${id}/wait?condition=removed`);
    };
    const steps = await trials("run --rm", async () => "", run, async (_id, why) => {
      // An AutoRemove container that is not running is removed at the start, as Docker does: one
      // left is running, or exited since (it lives half a second more): then it goes with its code.
      for (const [id, c] of containerRecords(bed)) {
        expect(c.State.Status, `${why}: ${id}`).to.be.oneOf(["running", "exited", "removing"]);
        const removed = await bed.api("POST", `/containers/${id}/wait?condition=removed`);
        if (removed.status === 404) continue; // gone between the read of the records and the wait
        expect(removed.status, `${why}: ${id} removed`).to.equal(200);
        expect((JSON.parse(removed.body) as { StatusCode: number }).StatusCode, why).to.equal(CODE);
      }
    });
    expect(steps).to.include.members(["create.saved", "start.saved", "exit.saved", "remove.layer-removed"]);
  });

  it("stop", async () => {
    const running = async () => {
      const id = await create(STOPS);
      await bed.ok("POST", `/containers/${id}/start`);
      return id;
    };
    const steps = await trials("stop", running, (id) => bed.ok("POST", `/containers/${id}/stop?t=10`), (id, why) => expectTrueRun(id, 3, why));
    expect(steps).to.include.members(["stop.noted", "stop.signalled", "exit.saved"]);
  });

  it("rm", async () => {
    const exited = async () => {
      const id = await create(EXITS);
      await bed.ok("POST", `/containers/${id}/start`);
      expect(await waitExit(id)).to.equal(CODE);
      return id;
    };
    const steps = await trials("rm", exited, (id) => bed.ok("DELETE", `/containers/${id}?v=1`), (id, why) => expectTrueRun(id, CODE, why));
    expect(steps).to.include.members(["remove.released", "remove.layer-removed"]);
  });
});
