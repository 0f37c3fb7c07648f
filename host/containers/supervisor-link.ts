/**
 * engined's link to the supervisor (host/supervisor/README.md): found (or started) on first use,
 * not at daemon start, so that a daemon that never runs a container never starts one; its exits
 * followed on one event stream; and, each time that stream (re)opens, a catch-up from the list
 * of its containers, so that no exit is missed while nobody listened.
 *
 * Every exit it learns of goes to `onExit` (the runner records it, once). The supervisor's
 * `remove` of a container (the runtime's delete) goes through `forget`, once at a time, so that
 * a new run of the same id can wait for it.
 */
import { existsSync } from "node:fs";
import type { Logger } from "pino";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { errors } from "../../core/errors.js";
import { processAlive } from "../process-alive.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { SupervisorClientError, type SupervisorClient } from "../supervisor/client.js";
import { ensureSupervisor, supervisorSocket, type SupervisorHandle } from "../supervisor/launch.js";
import type { ContainerState } from "../supervisor/supervisor.js";

/** What the link reads of the containers it runs: which it knows, and which it started when. */
export interface LinkedContainers {
  has(id: string): boolean;
  list(): readonly Pick<ContainerRecord, "Id" | "State">[];
}

export interface SupervisorLinkDeps {
  containers: LinkedContainers;
  config: () => DaemonConfig;
  /**
   * A supervisor of engined's own in this folder, serving this namespace, whatever `--supervisor`
   * and `--supervisor-namespace` say (the CRI's containers: host/cri/containers/).
   */
  own?: { home: string; namespace: string };
  execRoot: string;
  log: Logger;
  /**
   * An exit the event stream brought or a catch-up found; `error` when its code is unknown, `pid`
   * the process that exited (absent from a supervisor that does not say).
   */
  onExit: (id: string, exitCode: number, error?: string, pid?: number) => void;
}

/** How long (in 50 ms steps) a stop waits for engined's own supervisor to be gone: 5 s. */
const STOP_WAIT_STEPS = 100;

/** How long a supervisor that answers pings has to open its event stream. */
const EVENT_STREAM_MS = 10_000;

export class SupervisorLink {
  private handle?: Promise<SupervisorHandle>;
  private readonly following = new AbortController();
  private closedFlag = false;
  /** The supervisor's removals under way, by container id. */
  private readonly forgetting = new Map<string, Promise<void>>();

  constructor(private readonly deps: SupervisorLinkDeps) {}

  /** True once a connection was asked for (a supervisor may hold containers of this daemon). */
  get used(): boolean {
    return this.handle !== undefined;
  }

  /** True once the daemon is shutting down: nothing new runs. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** The supervisor's client; found or started on first use, then followed for exits. */
  async client(): Promise<SupervisorClient> {
    if (this.closedFlag) throw errors.supervisorUnavailable("the daemon is shutting down");
    if (!this.handle) {
      this.handle = this.connect();
      this.handle.catch(() => (this.handle = undefined));
    }
    try {
      return (await this.handle).client;
    } catch (err) {
      throw errors.supervisorUnavailable((err as Error).message);
    }
  }

  /**
   * Whether a supervisor may hold containers that no record says run (a run or its end that a
   * crash cut short): `--supervisor`'s, or one this daemon started before (its socket is there;
   * for a link with a supervisor of its own, that one's).
   */
  mayHoldContainers(): boolean {
    // a supervisor of the link's own: its socket is there
    if (this.deps.own) return existsSync(supervisorSocket({ execRoot: this.deps.execRoot, home: this.deps.own.home }));
    const config = this.deps.config();
    return Boolean(config.supervisor) || existsSync(supervisorSocket({ execRoot: this.deps.execRoot }));
  }

  /** The supervisor's containers, asked once, its events not followed (the daemon's start, before anything is recorded). */
  async states(): Promise<ContainerState[]> {
    const handle = await this.ensure();
    try {
      return await handle.client.list();
    } finally {
      await handle.client.close().catch(() => {});
    }
  }

  /** `--supervisor`'s, or engined's own under the exec root (started when none answers). */
  private ensure(): Promise<SupervisorHandle> {
    const own = this.deps.own;
    const config = this.deps.config();
    if (own) return ensureSupervisor({ execRoot: this.deps.execRoot, home: own.home, namespace: own.namespace, conmon: config.conmon });
    return ensureSupervisor({ address: config.supervisor || undefined, execRoot: this.deps.execRoot, namespace: config["supervisor-namespace"], conmon: config.conmon });
  }

  private async connect(): Promise<SupervisorHandle> {
    const handle = await this.ensure();
    this.deps.log.info({ pid: handle.pid, socket: handle.socket }, "supervisor connected");
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const abandoned = new AbortController();
    void this.follow(handle, opened, abandoned.signal);
    // Its exits must be followed before anything runs there; a supervisor that answers pings
    // but serves no event stream is not one to run containers on.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the supervisor at ${handle.socket} serves no event stream`)), EVENT_STREAM_MS);
    });
    try {
      await Promise.race([open, late]);
    } catch (err) {
      abandoned.abort();
      await handle.client.close().catch(() => {});
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return handle;
  }

  /** Takes every exit from the event stream; lists to catch up each time it (re)opens. */
  private async follow(handle: SupervisorHandle, opened: () => void, abandoned: AbortSignal): Promise<void> {
    for (let attempt = 0; !this.closedFlag && !abandoned.aborted; attempt++) {
      try {
        await handle.client.events((e) => this.deps.onExit(e.id, e.exitCode, undefined, e.pid), this.following.signal, () => {
          attempt = 0;
          opened();
          void this.catchUp(handle.client);
        });
      } catch (err) {
        if (this.closedFlag) return;
        this.deps.log.warn({ err }, "the supervisor's event stream broke");
      }
      if (this.closedFlag || abandoned.aborted) return;
      // Gone (killed, restarted by hand): engined's own is started again; one started by hand must come back.
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5000)));
      if (this.closedFlag) return;
      try {
        await handle.client.close().catch(() => {});
        const next = await this.ensure();
        handle.client = next.client;
        handle.pid = next.pid;
        this.deps.log.info({ pid: next.pid }, "supervisor reconnected");
      } catch (err) {
        this.deps.log.error({ err }, "the supervisor does not answer");
      }
    }
  }

  /** Exits the event stream did not bring (they happened while nobody listened). */
  private async catchUp(client: SupervisorClient): Promise<void> {
    try {
      const asked = Date.now();
      const states = await client.list();
      const known = new Set(states.map((s) => s.id));
      for (const s of states) {
        if (s.status === "exited") this.deps.onExit(s.id, s.exitCode ?? 255, undefined, s.pid);
        else if (!this.deps.containers.has(s.id)) void client.remove(s.id, true).catch(() => {}); // not ours any more
      }
      // A record that says running but the supervisor knows nothing of: it is gone, its code unknown.
      // (One started after the list was asked for is not in it, and not lost.)
      for (const c of this.deps.containers.list()) {
        if (c.State.Running && !known.has(c.Id) && Date.parse(c.State.StartedAt) < asked) {
          this.deps.onExit(c.Id, 255, "the supervisor lost the container (its exit code is unknown)", c.State.Pid);
        }
      }
    } catch (err) {
      this.deps.log.warn({ err }, "cannot list the supervisor's containers");
    }
  }

  /** The supervisor's `remove` of a container, once at a time; tracked so that a start of the same id waits for it. */
  forget(id: string): Promise<void> {
    const before = this.forgetting.get(id);
    if (before) return before;
    const done = (async () => {
      if (!this.handle) return;
      const sup = await this.client();
      await sup.remove(id, true).catch((err: Error) => {
        if (!(err instanceof SupervisorClientError && err.status === 404)) throw err;
      });
    })();
    const tracked = done.finally(() => this.forgetting.delete(id));
    tracked.catch((err: Error) => this.deps.log.error({ err, container: id }, "the supervisor could not forget a container"));
    this.forgetting.set(id, tracked);
    return tracked;
  }

  /** Settles once every removal under way has (at daemon stop). */
  async forgotten(): Promise<void> {
    await Promise.allSettled([...this.forgetting.values()]);
  }

  /**
   * Stops following and closes the connection. engined's own supervisor goes with it unless
   * containers live on (`keep`, live restore); one started by hand stays.
   */
  async close(keep: boolean): Promise<void> {
    this.closedFlag = true;
    this.following.abort();
    const handle = await this.handle?.catch(() => undefined);
    if (!handle) return;
    await handle.client.close().catch(() => {});
    if (handle.own && !keep) {
      try {
        process.kill(handle.pid, "SIGTERM");
      } catch {
        // gone already
      }
      // gone before this resolves: a daemon started again at once would find it still answering
      // pings but no longer serving, and wait for its event stream in vain
      for (let i = 0; i < STOP_WAIT_STEPS && processAlive(handle.pid); i++) await new Promise((r) => setTimeout(r, 50));
    }
  }
}
