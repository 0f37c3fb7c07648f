/**
 * The candidates of a `Source` (sources.ts): names asked of the daemon, the host's signals and
 * environment, or fixed values. The daemon is asked only for what the word needs (one list, or
 * `/info`), and every question shares one deadline: completion runs while someone waits at a
 * prompt, so a daemon that does not answer gives no names rather than a hung shell.
 */
import { constants } from "node:os";
import type { Connection } from "../connection.js";
import type { ContainerState, Source } from "./sources.js";

/** How long the daemon has, all questions together. */
const DAEMON_DEADLINE_MS = 700;

/**
 * engined's `/info` leaves Plugins.Log and Plugins.Network empty, so when a daemon lists none
 * the drivers the engine ships (plugins/log-*, plugins/network-*) stand in.
 */
const SHIPPED_DRIVERS = { log: ["journald", "json-file", "local", "none", "syslog"], network: ["bridge"] };

interface ContainerSummary {
  Names?: string[];
  State?: string;
}

interface DaemonInfo {
  Plugins?: { Log?: string[]; Network?: string[]; Volume?: string[] };
  Runtimes?: Record<string, unknown>;
}

const IN_STATE: Record<ContainerState, (state: string) => boolean> = {
  all: () => true,
  running: (s) => s === "running",
  up: (s) => s === "running" || s === "paused" || s === "restarting",
  paused: (s) => s === "paused",
  stopped: (s) => s === "exited" || s === "created",
};

/** The daemon's list; the shipped one when it answered with none (not when it did not answer). */
function orShipped(listed: string[] | undefined, shipped: string[]): string[] {
  return listed === undefined ? [] : listed.length ? listed : shipped;
}

export class NameLookup {
  private connection?: Connection;
  private readonly deadline: Promise<undefined>;
  private timer?: NodeJS.Timeout;

  /** `open`: the daemon the line reaches; `contexts`: the client's context names (no daemon asked). */
  constructor(
    private readonly open: () => Connection,
    private readonly contexts: () => Promise<string[]> = async () => [],
  ) {
    this.deadline = new Promise((resolve) => {
      this.timer = setTimeout(() => resolve(undefined), DAEMON_DEADLINE_MS);
    });
  }

  /** The candidates of `source`; `type` is `inspect --type`'s value when given. */
  async of(source: Source, type?: string): Promise<string[]> {
    switch (source.kind) {
      case "values":
        return [...source.values];
      case "files":
        return [];
      case "signals":
        return Object.keys(constants.signals);
      case "env-names":
        return Object.keys(process.env);
      case "containers":
        return (await this.containers(source.state)).map((n) => n + (source.suffix ?? ""));
      case "images":
        return this.images();
      case "networks":
        return this.networks();
      case "volumes":
        return (await this.volumes()).map((n) => n + (source.suffix ?? ""));
      case "objects": {
        const lists = { container: () => this.containers("all"), image: () => this.images(), network: () => this.networks(), volume: () => this.volumes() };
        const wanted = type && type in lists ? [lists[type as keyof typeof lists]] : Object.values(lists);
        return (await Promise.all(wanted.map((list) => list()))).flat();
      }
      case "log-drivers": {
        // a daemon's list leaves `none` out (it is no driver to dockerd), but `--log-driver none` is valid
        const listed = orShipped((await this.info())?.Plugins?.Log, SHIPPED_DRIVERS.log);
        return listed.length ? [...new Set([...listed, "none"])].sort() : [];
      }
      case "network-drivers":
        return orShipped((await this.info())?.Plugins?.Network, SHIPPED_DRIVERS.network);
      case "volume-drivers":
        return (await this.info())?.Plugins?.Volume ?? [];
      case "runtimes":
        return Object.keys((await this.info())?.Runtimes ?? {});
      case "contexts":
        return this.contexts();
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.connection?.close();
  }

  private async containers(state: ContainerState): Promise<string[]> {
    const list = (await this.ask<ContainerSummary[]>("/containers/json", { all: "1" })) ?? [];
    // a link's alias shows as "/web/db": not a name to type
    return list.filter((c) => IN_STATE[state](c.State ?? "")).flatMap((c) => (c.Names ?? []).map((n) => n.replace(/^\//, "")).filter((n) => !n.includes("/")));
  }

  private async images(): Promise<string[]> {
    const list = (await this.ask<{ RepoTags?: string[] | null }[]>("/images/json")) ?? [];
    return list.flatMap((i) => i.RepoTags ?? []).filter((t) => t !== "<none>:<none>");
  }

  private async networks(): Promise<string[]> {
    return ((await this.ask<{ Name: string }[]>("/networks")) ?? []).map((n) => n.Name);
  }

  private async volumes(): Promise<string[]> {
    return ((await this.ask<{ Volumes?: { Name: string }[] | null }>("/volumes"))?.Volumes ?? []).map((v) => v.Name);
  }

  private info(): Promise<DaemonInfo | undefined> {
    return this.ask<DaemonInfo>("/info");
  }

  /** The answer, or undefined when the daemon failed, refused or ran past the deadline. */
  private async ask<T>(path: string, query?: Record<string, string>): Promise<T | undefined> {
    try {
      this.connection ??= this.open();
      const answer = this.connection.getJson<T>(path, { query });
      answer.catch(() => undefined);
      return await Promise.race([answer, this.deadline]);
    } catch {
      return undefined;
    }
  }
}
