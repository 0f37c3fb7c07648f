/**
 * Faults stay local: a fault in one request is answered 500 with its message; a notification
 * tap that throws is logged and the operation that fired it goes on; an exception thrown from a
 * timer and a rejection nobody awaits are logged with their stacks, and the daemon goes on
 * serving, its containers running (host/process-faults.ts says why that is safe). A fault while
 * the daemon starts is still fatal. The real daemon is driven with a plugin, loaded as
 * `--authorization-plugin <file>`, whose taps throw; the handlers are also checked in-process.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { createHooks } from "../core/hooks.js";
import { guardNotifications } from "../host/notification-guard.js";
import { faultHandler, LOG_LIMIT } from "../host/process-faults.js";
import { processAlive } from "../host/process-alive.js";
import { docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, runEngined, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { temps, write, type LogLine } from "./helpers/plugin-fixtures.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A logger that keeps its lines, parsed. */
function memoryLog() {
  const lines: (LogLine & { err?: { message: string; stack: string } })[] = [];
  const log = pino({ level: "debug", base: undefined, formatters: { level: (label) => ({ level: label }) } }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  return { log, lines };
}

/** The JSON log lines (`--log-format json`) of a daemon's output. */
function jsonLines(output: string): (LogLine & { err?: { message: string; stack: string } })[] {
  return output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

/** Waits (bounded) until the daemon logged a line `match` accepts; returns it. */
async function logged(d: TestDaemon, match: (l: ReturnType<typeof jsonLines>[number]) => boolean, what: string) {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const line = jsonLines(d.output()).find(match);
    if (line) return line;
    await sleep(50);
  }
  throw new Error(`not logged: ${what}\n${d.output().slice(-4000)}`);
}

/**
 * The faulty plugin: a request whose URI says `fault=request` fails in its authorization tap;
 * the start of the container named `trigger` makes it throw from its event tap, from a timer,
 * and reject a promise nobody awaits; that container's `die` makes its event tap throw again.
 */
const FAULTY_PLUGIN = `
export default {
  manifest: { id: "authz.faulty", kind: "authz", description: "throws outside any request (test fixture)" },
  apply(hooks) {
    hooks.authorizeRequest.tap("authz.faulty", (req) => {
      if (req.uri.includes("fault=request")) throw new Error("faulty plugin: the policy store is down");
      return undefined;
    });
    hooks.event.tap("authz.faulty", (event) => {
      if (event.Type !== "container" || event.Actor.Attributes.name !== "trigger") return;
      if (event.Action === "start") {
        setTimeout(function timerFault() { throw new Error("faulty plugin: thrown from a timer"); }, 20);
        Promise.reject(new Error("faulty plugin: a rejection nobody awaits"));
        throw new Error("faulty plugin: thrown from the start event's tap");
      }
      if (event.Action === "die") throw new Error("faulty plugin: thrown from the die event's tap");
    });
  },
};
`;

describe("daemon faults", function () {
  describe("the handlers (in-process)", function () {
    it("logs an uncaught exception and an unhandled rejection with their stacks and goes on; past the limit in a minute it counts them", function () {
      const { log, lines } = memoryLog();
      let clock = 1_000;
      let fatal = 0;
      const handle = faultHandler({ log, phase: () => "serving", fatal: () => fatal++, now: () => clock });
      handle(new Error("from a timer"), "uncaughtException");
      handle(new Error("nobody awaited"), "unhandledRejection");
      handle("a string rejected", "unhandledRejection");
      expect(fatal).to.equal(0);
      expect(lines[0]).to.include({ level: "error", msg: "uncaught exception: the daemon goes on serving" });
      expect(lines[0].err!.stack).to.match(/^Error: from a timer\n\s+at /);
      expect(lines[1]).to.include({ level: "error", msg: "unhandled rejection: the daemon goes on serving" });
      expect(lines[1].err!.message).to.equal("nobody awaited");
      expect(lines[2].err!.message).to.equal('non-error value: a string rejected');

      for (let i = 0; i < LOG_LIMIT + 5; i++) handle(new Error(`storm ${i}`), "uncaughtException");
      expect(lines.length, "logged one by one up to the limit").to.equal(LOG_LIMIT);
      clock += 60_000;
      handle(new Error("after the storm"), "uncaughtException");
      expect(lines.at(-2)).to.include({ level: "warn", faults: 8 });
      expect(lines.at(-1)!.err!.message).to.equal("after the storm");
    });

    it("is fatal while the daemon starts (once), and logs without stopping while it stops", function () {
      const { log, lines } = memoryLog();
      let phase: "starting" | "serving" | "stopping" = "starting";
      const fatal: unknown[] = [];
      const handle = faultHandler({ log, phase: () => phase, fatal: (err) => fatal.push(err) });
      handle(new Error("during start"), "uncaughtException");
      handle(new Error("during start, again"), "unhandledRejection");
      expect(fatal).to.have.length(1);
      expect(lines.map((l) => [l.level, l.msg])).to.deep.equal([
        ["fatal", "uncaught exception while the daemon starts"],
        ["fatal", "unhandled rejection while the daemon starts"],
      ]);
      phase = "stopping";
      handle(new Error("during stop"), "uncaughtException");
      expect(lines.at(-1)).to.include({ level: "error", msg: "uncaught exception: the daemon goes on stopping" });
      expect(fatal).to.have.length(1);
    });

    it("a notification tap that throws is logged with its hook and tap; the other taps run and the caller goes on", function () {
      const { log, lines } = memoryLog();
      const hooks = createHooks();
      const seen: string[] = [];
      hooks.event.tap("before-the-guard", () => {
        throw new Error("tapped before the guard");
      });
      guardNotifications(hooks, log);
      hooks.event.tap("thrower", () => {
        throw new Error("tapped after the guard");
      });
      hooks.event.tap("listener", (e) => void seen.push(e.Action));
      hooks.failedContainerStart.tap("thrower", () => {
        throw new Error("failed start tap");
      });
      const event = { Type: "container" as const, Action: "die", Actor: { ID: "x", Attributes: {} }, scope: "local" as const, time: 0, timeNano: 0n };
      expect(() => hooks.event.call(event)).to.not.throw();
      expect(() => hooks.failedContainerStart.call({ containerId: "x", message: "m" })).to.not.throw();
      expect(seen).to.deep.equal(["die"]);
      expect(lines.map((l) => [l.hook, l.tap, l.err!.message])).to.deep.equal([
        ["event", "before-the-guard", "tapped before the guard"],
        ["event", "thrower", "tapped after the guard"],
        ["failedContainerStart", "thrower", "failed start tap"],
      ]);
      expect(lines[0].msg).to.equal("a tap of the event notification failed; the daemon goes on");
    });
  });

  describe("engined with a plugin whose taps throw", function () {
    this.timeout(120_000);
    let d: TestDaemon | undefined;
    let host: string;
    const cli = async (...args: string[]) => {
      const r = await docker(host, args);
      expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
      return r.stdout.trim();
    };

    before(function () {
      if (process.getuid?.() !== 0) this.skip();
    });
    after(async () => {
      if (d && d.proc.exitCode === null) {
        await docker(host, ["rm", "-f", "sleeper", "trigger"]);
        await d.stop();
      }
    });

    it("answers a faulty request 500, logs the stray faults with their stacks, and keeps serving and running its containers", async () => {
      const dir = makeTempDir("engine-faults-");
      temps.push(dir);
      const plugin = write(join(dir, "plugins", "faulty.js"), FAULTY_PLUGIN);
      d = await startEngined({ args: ["--authorization-plugin", plugin, "--log-format", "json"] });
      host = `unix://${d.socket}`;
      await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
      await cli("run", "-d", "--name", "sleeper", "busybox", "sleep", "300");
      const sleeperPid = JSON.parse(await cli("inspect", "sleeper"))[0].State.Pid as number;
      expect(processAlive(sleeperPid)).to.equal(true);

      // a fault in one request: that request is answered 500 with the message, and logged
      const faulty = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/_ping?fault=request");
      expect(faulty.status).to.equal(500);
      expect(JSON.parse(faulty.body).message).to.include("faulty plugin: the policy store is down");
      await logged(d, (l) => l.msg === "API request failed" && l.err?.message.includes("the policy store is down") === true, "the request's fault");

      // the start of `trigger` sets off the faults outside any request; the start itself goes on
      await cli("run", "-d", "--name", "trigger", "busybox", "sleep", "300");
      const tap = await logged(d, (l) => l.msg === "a tap of the event notification failed; the daemon goes on", "the event tap's fault");
      expect(tap).to.include({ level: "error", hook: "event", tap: "authz.faulty" });
      expect(tap.err!.message).to.equal("faulty plugin: thrown from the start event's tap");
      const timer = await logged(d, (l) => l.msg === "uncaught exception: the daemon goes on serving", "the timer's exception");
      expect(timer.level).to.equal("error");
      expect(timer.err!.stack).to.match(/Error: faulty plugin: thrown from a timer\n\s+at (Timeout\.)?timerFault .*faulty\.js/);
      const rejection = await logged(d, (l) => l.msg === "unhandled rejection: the daemon goes on serving", "the unhandled rejection");
      expect(rejection.err!.stack).to.match(/Error: faulty plugin: a rejection nobody awaits\n\s+at .*faulty\.js/);

      // still serving, both containers still running, the first one's process the same
      expect(d.proc.exitCode).to.equal(null);
      expect((await httpRequest({ socketPath: d.socket }, "GET", "/_ping")).status).to.equal(200);
      expect((await cli("ps", "--format", "{{.Names}}")).split("\n").sort()).to.deep.equal(["sleeper", "trigger"]);
      expect(JSON.parse(await cli("inspect", "sleeper"))[0].State).to.include({ Running: true, Pid: sleeperPid });
      expect(processAlive(sleeperPid)).to.equal(true);

      // the exit of `trigger` is recorded and its waiters told, although its die tap throws
      await cli("kill", "trigger");
      expect(await cli("wait", "trigger")).to.equal("137");
      expect(JSON.parse(await cli("inspect", "trigger"))[0].State).to.include({ Status: "exited", ExitCode: 137 });
      await logged(d, (l) => l.err?.message === "faulty plugin: thrown from the die event's tap", "the die tap's fault");
      await cli("rm", "trigger");
      // and the daemon goes on doing the rest of its work
      expect(await cli("run", "--rm", "busybox", "echo", "still here")).to.equal("still here");
      expect(jsonLines(d.output()).some((l) => l.level === "fatal")).to.equal(false);
      await cli("rm", "-f", "sleeper");
      expect(await d.stop()).to.equal(0);
    });

    it("stops, exits 1 and leaves nothing behind when a fault comes while the daemon starts", async () => {
      const dir = makeTempDir("engine-faults-");
      temps.push(dir);
      const plugin = write(
        join(dir, "plugins", "early.js"),
        `export default { manifest: { id: "authz.early", kind: "authz" }, apply() { setTimeout(() => { throw new Error("early fault"); }, 0); } };\n`,
      );
      const socket = join(dir, "s.sock");
      const run = await runEngined([...daemonArgs(dir), "-H", `unix://${socket}`, "--authorization-plugin", plugin, "--log-format", "json"], { cwd: dir });
      expect(run.code).to.equal(1);
      const fatal = jsonLines(run.stderr).find((l) => l.level === "fatal");
      expect(fatal, run.stderr).to.include({ msg: "uncaught exception while the daemon starts" });
      expect(fatal!.err!.message).to.equal("early fault");
      expect(jsonLines(run.stderr).some((l) => l.msg === "daemon has completed initialization")).to.equal(false);
      expect(existsSync(socket), "socket").to.equal(false);
      expect(existsSync(join(dir, "engine.pid")), "pid file").to.equal(false);
    });
  });
});
