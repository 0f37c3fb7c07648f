/**
 * A bed for the kill-point tests: one real engined on roots of its own, kept across trials,
 * started with its kill points read from a file (`ENGINE_DAEMON_KILL_POINT=@FILE`,
 * core/kill-points.ts) and every step traced (`ENGINE_DAEMON_KILL_TRACE`). An operation is run
 * once to learn the steps it passes (`steps`); then, for each step in turn, a trial arms that
 * step, runs the operation, waits for the daemon to SIGKILL itself there, starts it again on the
 * same roots with no kill point, and hands over to the checks (kill-checks.ts). The daemon that
 * a trial starts is the next trial's: its kill file is empty until the next arming, and its
 * points count only once it serves, so its start-up recovery is never what is killed.
 * `--live-restore`: what a trial started keeps running across the kills, as the checks want.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";
import { httpRequest, type HttpAnswer } from "./http.js";
import type { Netns } from "./net-daemon.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface KillBedOptions {
  /** Run the daemon in this network namespace, with its default bridge (else `--bridge none`). */
  netns?: Netns;
  args?: string[];
}

/** What a trial found: the step asked for, whether the daemon died there, and how long it took. */
export interface TrialResult {
  point: string;
  reached: boolean;
  ms: number;
}

export class KillBed {
  readonly dir: string;
  readonly dataRoot: string;
  readonly execRoot: string;
  private readonly control: string;
  private readonly traceFile: string;
  d!: TestDaemon;
  readonly results: TrialResult[] = [];

  constructor(private readonly opts: KillBedOptions = {}) {
    this.dir = makeTempDir("engine-kill-");
    this.dataRoot = join(this.dir, "data");
    this.execRoot = join(this.dir, "exec");
    this.control = join(this.dir, "kill-point");
    this.traceFile = join(this.dir, "kill-trace");
    writeFileSync(this.control, "");
    writeFileSync(this.traceFile, "");
  }

  get socket(): string {
    return this.d.socket;
  }

  /** (Re)starts the daemon on the bed's roots, no kill point armed. */
  async start(): Promise<void> {
    writeFileSync(this.control, "");
    this.d = await startEngined({
      netns: this.opts.netns?.file,
      args: ["--data-root", this.dataRoot, "--exec-root", this.execRoot, "--pidfile", join(this.dir, "engine.pid"), "--live-restore", ...(this.opts.args ?? [])],
      env: { ENGINE_DAEMON_KILL_POINT: `@${this.control}`, ENGINE_DAEMON_KILL_TRACE: this.traceFile },
      timeoutMs: 60_000,
    });
  }

  /** Stops the daemon (SIGTERM; with live restore its containers stay: remove them first). */
  async stop(): Promise<void> {
    await this.d?.stop();
  }

  api(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    return httpRequest({ socketPath: this.d.socket }, method, `/v1.51${path}`, body);
  }

  /** An API call that must answer `status` (2xx by default); its JSON. */
  async ok<T = any>(method: string, path: string, body?: unknown, status?: number): Promise<T> {
    const r = await this.api(method, path, body);
    if (status ? r.status !== status : r.status < 200 || r.status > 299) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
    return (r.body ? JSON.parse(r.body) : undefined) as T;
  }

  /** A request with a raw body (an archive), its answer read to the end. */
  send(method: string, path: string, body: Buffer, contentType = "application/x-tar", timeoutMs = 60_000): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath: this.d.socket, method, path: `/v1.51${path}`, headers: { "content-type": contentType, "content-length": body.length }, timeout: timeoutMs }, (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", reject);
      req.end(body);
    });
  }

  private traceLength(): number {
    return readFileSync(this.traceFile, "utf8").length;
  }

  /** Resolves once no step has been reached for `ms` (bounded): what came before an operation does not spill into its steps. */
  async quiet(ms = 250, boundMs = 5000): Promise<void> {
    const until = Date.now() + boundMs;
    let length = this.traceLength();
    for (;;) {
      await sleep(ms);
      const now = this.traceLength();
      if (now === length || Date.now() > until) return;
      length = now;
    }
  }

  /** The steps `op` passes, in order (those of what follows its answer, until the daemon is quiet, too). */
  async steps(op: () => Promise<unknown>): Promise<string[]> {
    await this.quiet();
    const from = this.traceLength();
    await op();
    await this.quiet(400);
    return readFileSync(this.traceFile, "utf8").slice(from).split("\n").filter(Boolean);
  }

  /**
   * One trial: `point` armed, `op` run, the daemon's death awaited (bounded); then it is started
   * again. A point the run did not reach (its count differed this time) ends with a SIGKILL
   * after the operation, which is a trial too. Resolves once the daemon serves again.
   */
  async trial(point: string, op: () => Promise<unknown>, waitMs = 15_000): Promise<TrialResult> {
    const started = Date.now();
    const proc = this.d.proc;
    const exited = new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve();
      else proc.once("exit", () => resolve());
    });
    writeFileSync(this.control, point);
    // the operation's answer is cut short by the kill: its error is what a client sees then
    const answered = op().catch(() => undefined);
    const died = await Promise.race([exited.then(() => true), answered.then(() => sleep(1500)).then(() => false), sleep(waitMs).then(() => false)]);
    if (!died) {
      proc.kill("SIGKILL");
      await exited;
    }
    writeFileSync(this.control, "");
    await this.d.stop();
    await this.start();
    const result = { point, reached: died && proc.signalCode === "SIGKILL", ms: Date.now() - started };
    this.results.push(result);
    return result;
  }
}

export interface EveryStep<T> {
  /** The operation's name, for the messages. */
  name: string;
  /** Makes what the operation works on (a container to start...), before each run; untraced. */
  prepare: () => Promise<T>;
  op: (subject: T) => Promise<unknown>;
  /** What must hold after the restart, beside the common checks (`problems`). */
  after: (subject: T, why: string) => Promise<void>;
  /** Removes what the trial left, so that the next starts from the same state. */
  cleanup: () => Promise<void>;
  /** The common checks (helpers/kill-checks.ts): the problems they find. */
  problems: () => Promise<string[]>;
}

/**
 * An operation's trials: its steps learnt from one run, then a kill at each step in turn, the
 * checks after each restart, and after the clean-up. Every trial runs, whatever an earlier one
 * found; the failures are thrown together at the end. Resolves with the steps.
 */
export async function everyStep<T>(bed: KillBed, t: EveryStep<T>): Promise<string[]> {
  const first = await t.prepare();
  const steps = await bed.steps(() => t.op(first));
  await t.cleanup();
  const failures: string[] = [];
  const expectNone = async (why: string) => {
    const problems = await t.problems();
    if (problems.length > 0) throw new Error(`${why}: ${problems.join("; ")}`);
  };
  for (const point of occurrences(steps)) {
    const times = [Date.now()];
    const subject = await t.prepare();
    await bed.quiet();
    times.push(Date.now());
    const result = await bed.trial(point, () => t.op(subject));
    times.push(Date.now());
    const why = `${t.name}, killed at ${point}${result.reached ? "" : " (not reached: killed after the operation)"}`;
    try {
      await expectNone(why);
      times.push(Date.now());
      await t.after(subject, why);
      times.push(Date.now());
      await t.cleanup();
      times.push(Date.now());
    } catch (err) {
      failures.push((err as Error).message);
      await t.cleanup().catch(() => undefined);
    }
    if (process.env.ENGINE_TEST_KILL_VERBOSE) console.log(`      ${why}: ${times.slice(1).map((x, i) => x - times[i]).join(" / ")} ms`);
  }
  // what the clean-ups left: nothing
  await expectNone(`${t.name}, after its trials`).catch((err: Error) => failures.push(err.message));
  if (failures.length > 0) throw new Error(`${t.name}: ${failures.length} failures in ${steps.length} trials:\n${failures.join("\n")}`);
  return steps;
}

/** Prints how many trials a bed ran, how many were killed at their step, and the time they took. */
export function reportTrials(label: string, bed: KillBed): void {
  if (bed.results.length === 0) return;
  const reached = bed.results.filter((r) => r.reached).length;
  const ms = bed.results.reduce((n, r) => n + r.ms, 0);
  console.log(`      ${label}: ${bed.results.length} trials, ${reached} killed at their step, ${(ms / 1000).toFixed(0)} s in trials`);
}

/** Each step with its occurrence (`name:n`, the n-th time the operation passed it): the points to arm. */
export function occurrences(steps: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return steps.map((s) => {
    const n = (seen.get(s) ?? 0) + 1;
    seen.set(s, n);
    return `${s}:${n}`;
  });
}
