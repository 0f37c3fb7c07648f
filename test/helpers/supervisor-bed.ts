/**
 * A supervisor of its own for a suite (real conmon and runc, busybox containers), the way
 * engined starts and restarts it (`ensureSupervisor`), and what the suite ran, removed after.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { LoggerContext } from "../../core/contracts/log.js";
import { ensureSupervisor, type SupervisorHandle } from "../../host/supervisor/launch.js";
import { processAlive } from "../../host/process-alive.js";
import { BUSYBOX, hasCommand, makeBundle, makeBusyboxRootfs, removeCgroups, RUNC, runcDefaultSpec } from "./busybox-bundle.js";
import { makeTempDir } from "./engined.js";

export class SupervisorBed {
  readonly dir = makeTempDir("engine-supervisor-");
  readonly execRoot = join(this.dir, "exec");
  sup!: SupervisorHandle;
  private rootfs = "";
  private spec: Record<string, any> = {};
  private readonly ids: string[] = [];
  private readonly pids = new Set<number>();

  static usable(): boolean {
    return process.getuid?.() === 0 && !!RUNC && !!BUSYBOX && hasCommand("conmon");
  }

  constructor(readonly namespace: string) {}

  async start(env: NodeJS.ProcessEnv = {}): Promise<SupervisorHandle> {
    if (!this.rootfs) {
      this.rootfs = makeBusyboxRootfs(this.dir);
      this.spec = runcDefaultSpec(this.dir);
    }
    // ensureSupervisor starts it with our environment: the kill points go through it.
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      this.sup = await ensureSupervisor({ execRoot: this.execRoot, namespace: this.namespace });
    } finally {
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    this.pids.add(this.sup.pid);
    return this.sup;
  }

  /** SIGKILL of the supervisor; resolves once it is gone (bounded). */
  async killSupervisor(): Promise<void> {
    const pid = this.sup.pid;
    this.kill(pid);
    await this.sup.client.close().catch(() => {});
    await this.gone(pid, 5000);
  }

  /** SIGKILL, only to a supervisor of this bed (a pid may have been taken by another process since). */
  private kill(pid: number): void {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(this.execRoot)) return;
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }

  /** Waits (bounded) for the supervisor's process to end by itself (a kill point); says whether it did. */
  async gone(pid = this.sup.pid, ms = 30_000): Promise<boolean> {
    const until = Date.now() + ms;
    while (processAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return !processAlive(pid);
  }

  /** The spool folder of a container. */
  containerDir(id: string): string {
    return join(this.execRoot, "supervisor", this.namespace, id);
  }

  logContext(id: string, options: Record<string, string> = {}): LoggerContext {
    return { containerId: id, containerName: `/${id}`, imageName: "busybox", imageId: "sha256:0", labels: {}, env: [], logDir: join(this.dir, "logs", id), options };
  }

  jsonLog(id: string): string {
    return join(this.dir, "logs", id, `${id}-json.log`);
  }

  async run(args: string[], options: Record<string, string> = {}): Promise<{ id: string; logPath: string }> {
    const id = `t-${randomBytes(5).toString("hex")}`;
    this.ids.push(id);
    const state = await this.sup.client.run({
      id,
      bundle: makeBundle(this.dir, id, this.rootfs, this.spec, args),
      runtime: { path: RUNC! },
      log: { driver: "json-file", context: this.logContext(id, options) },
    });
    return { id, logPath: (state as { logPath: string }).logPath };
  }

  /** Removes a container and its log files. */
  async remove(id: string): Promise<void> {
    await this.sup.client.remove(id, true).catch(() => undefined);
    removeCgroups(id);
    rmSync(join(this.dir, "logs", id), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    if (this.sup && !processAlive(this.sup.pid)) await this.start().catch(() => undefined);
    for (const id of this.ids) await this.remove(id);
    await this.sup?.client.close().catch(() => {});
    for (const pid of this.pids) this.kill(pid);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
