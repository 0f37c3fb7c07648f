/**
 * The containers of this daemon: one record each at `<data-root>/containers/<id>/config.json`,
 * written atomically, all kept in memory too (lists and lookups are frequent, writes rare).
 * A save changes the memory at once and writes the file off the event loop
 * (core/fs/record-writer.ts): it resolves once the record is on disk, and a client is answered
 * only then.
 * Ids are 64 hex characters, found by a unique prefix or by name (with or without the leading
 * `/`); names are unique, and indexed: a lookup or a claim by name costs the same with 10 or
 * 10,000 containers. A name is claimed (taken from other creates and renames) from `claimName`
 * until the record that has it is saved, or the claim is released.
 *
 * What a crash can cut short (docs/kill-points.md): a create makes the container's folder, on
 * disk, before its writable layer, and writes the record last; a removal marks the folder
 * (`removing.json`) before anything goes, and unlinks the record before the rest of the
 * folder. So a folder without a record is a create or a removal that did not finish, whose
 * layer the next start removes with the folder (`sweepUnfinished`); a record with the mark is a
 * removal the next start finishes (`interruptedRemovals`). Never a record whose layer or log is
 * half gone, nor a layer that no folder names.
 */
import { randomBytes } from "node:crypto";
import { chownSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { errors } from "../errors.js";
import { jsonText, removeTempFiles, syncDir, writeFileDurably } from "../fs/durable-file.js";
import { RecordWriter } from "../fs/record-writer.js";
import { PASS_DIR } from "../state-modes.js";
import type { EndpointSpec } from "../contracts/network.js";
import type { ContainerCreateConfig, HostConfig } from "./container-config.js";
import type { HealthState } from "./healthcheck.js";
import type { ContainerLink } from "./links.js";
import type { ContainerMount } from "./mount-point.js";
import { generateName } from "./names.js";

export type ContainerStatus = "created" | "running" | "paused" | "restarting" | "removing" | "exited" | "dead";

export interface ContainerState {
  Status: ContainerStatus;
  Running: boolean;
  Paused: boolean;
  Restarting: boolean;
  OOMKilled: boolean;
  Dead: boolean;
  Pid: number;
  ExitCode: number;
  Error: string;
  StartedAt: string;
  FinishedAt: string;
  /** Present once a container with a health check has started (core/containers/healthcheck.ts). */
  Health?: HealthState;
}

/** One network a container is on (its endpoint while it runs; addresses empty when it does not). */
export interface ContainerEndpoint extends EndpointSpec {
  networkName: string;
  /** The sandbox (network namespace file) while it runs. */
  sandbox?: string;
  /** The network's name server for this container, when the network has one (the driver's join says). */
  nameserver?: string;
}

/**
 * A network a container is on, as it was asked for (at create, or `POST /networks/{id}/connect`):
 * the configured part of Docker's EndpointSettings. What a run got is in `Endpoints`.
 */
export interface NetworkAttachment {
  NetworkID: string;
  Aliases?: string[] | null;
  IPAMConfig?: { IPv4Address?: string; IPv6Address?: string; LinkLocalIPs?: string[] } | null;
  /** EndpointSettings.DriverOpts as asked (kept and shown, as Docker's daemon does). */
  DriverOpts?: Record<string, string>;
  /** The endpoint's MAC as asked (else Docker's, made from its IPv4 address). */
  MacAddress?: string;
  /** EndpointSettings.Links as asked (`name:alias`): on a user-defined network, names this container alone resolves. */
  Links?: string[];
  /** EndpointSettings.GwPriority as asked: the network of the highest gives the default route (ties: the first). */
  GwPriority?: number;
}

export interface ContainerRecord {
  Id: string;
  /** With the leading slash, as Docker shows it. */
  Name: string;
  Created: string;
  Path: string;
  Args: string[];
  /** The request's configuration merged over the image's. */
  Config: ContainerCreateConfig;
  HostConfig: HostConfig;
  /** The image's ID. */
  Image: string;
  Driver: string;
  LogPath: string;
  State: ContainerState;
  /** By network name, in the order the container joins them (its NetworkMode's first); absent for container:. */
  Networks?: Record<string, NetworkAttachment>;
  /** The endpoints of its current run, one per network it joined; absent while it does not run. */
  Endpoints?: ContainerEndpoint[];
  /** Its legacy links to other containers (`HostConfig.Links` on the default network, resolved at create). */
  Links?: ContainerLink[];
  /** Its binds, volumes and tmpfs mounts as its create resolved them; absent when it has none. */
  Mounts?: ContainerMount[];
  /** Restarts its restart policy made since the last start by a user (Docker's RestartCount). */
  RestartCount?: number;
  /** A user stopped (or killed) it: `unless-stopped` leaves it stopped, even across a daemon restart. */
  HasBeenManuallyStopped?: boolean;
  /**
   * On disk only, while a start waits for the supervisor (`savePendingStart`): the record is
   * written as running, with the state it had before, from just before the supervisor is asked
   * to run the container until its answer is recorded. After a crash in between, the next start
   * asks the supervisor and takes the run up, or puts the state before back if there was none
   * (host/containers/restore.ts).
   */
  PendingStart?: { previous: ContainerState };
  /**
   * Paused by a commit while its layer is read, not by a user: a commit a crash cuts short
   * leaves it so, and the next start thaws it (host/containers/restore.ts).
   */
  CommitPause?: true;
  /**
   * Its networking was disabled by the daemon, for want of the default network it asked for
   * (`--bridge=none`), not by its client: it keeps /etc/hosts and resolv.conf beside its
   * hostname at every start, as Docker's keeps the files it made at the first.
   */
  NetworkDisabledByDaemon?: true;
}

const NAME = /^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
/** The mark of a removal under way, in the container's folder: `{"volumes": bool}` (rm -v). */
const REMOVAL_MARK = "removing.json";
/** Go's zero time, as Docker shows the times of a container that never ran. */
export const ZERO_TIME = "0001-01-01T00:00:00Z";

/** The state of a container that runs (`pid`, started at `startedAt`), from its state before. */
export function runningState(before: ContainerState, pid: number, startedAt: string): ContainerState {
  return {
    ...before,
    Status: "running", Running: true, Paused: false, Restarting: false, OOMKilled: false, Dead: false,
    Pid: pid, ExitCode: 0, Error: "", StartedAt: startedAt,
  };
}

export function newState(): ContainerState {
  return {
    Status: "created", Running: false, Paused: false, Restarting: false, OOMKilled: false, Dead: false,
    Pid: 0, ExitCode: 0, Error: "", StartedAt: ZERO_TIME, FinishedAt: ZERO_TIME,
  };
}

export class ContainerStore {
  private readonly byId = new Map<string, ContainerRecord>();
  /**
   * Name -> id: the names of the saved records, and the names claimed by creates and renames
   * under way (their record not saved with it yet). `savedName` is the other way round, for
   * saved records only: what a save or a removal takes out of `names`.
   */
  private readonly names = new Map<string, string>();
  private readonly savedName = new Map<string, string>();
  /** Records found at the open with a name another record had (creates at once could make them before names were claimed). */
  private sharedNames = false;
  private readonly writer = new RecordWriter();
  /** Containers whose removal is under way: their layer may be gone before their record is. */
  private readonly removing = new Set<string>();
  /** Folders without a record, found at the open: creates and removals a crash cut short. */
  private readonly unfinished: string[] = [];
  /** Removals a crash cut short, found at the open: id -> whether the anonymous volumes go too. */
  private readonly interrupted = new Map<string, boolean>();

  /**
   * `passGid`: under `--userns-remap`, the remapped root's group, which passes through each
   * container's folder (its runtime binds the network files from inside the user namespace).
   */
  constructor(readonly root: string, private readonly passGid?: number) {
    mkdirSync(root, { recursive: true, mode: PASS_DIR });
    for (const id of readdirSync(root)) {
      if (!/^[a-f0-9]{64}$/.test(id)) continue;
      removeTempFiles(join(root, id));
      let record: ContainerRecord;
      try {
        record = JSON.parse(readFileSync(join(root, id, "config.json"), "utf8")) as ContainerRecord;
      } catch {
        this.unfinished.push(id);
        continue;
      }
      this.byId.set(id, record);
      if (this.names.has(record.Name)) {
        // the first keeps the name; this one has it until it is renamed or removed
        this.sharedNames = true;
        this.savedName.set(id, record.Name);
      } else {
        this.indexName(record);
      }
      try {
        this.interrupted.set(id, (JSON.parse(readFileSync(join(root, id, REMOVAL_MARK), "utf8")) as { volumes?: boolean }).volumes === true);
      } catch {
        // no removal under way
      }
    }
  }

  /**
   * At the daemon's start, once the storage driver is open: the folders without a record (a
   * create or a removal a crash cut short) go, each after its writable layer (`removeLayer`),
   * so that a crash meanwhile leaves the folder to say which layer is still to go. Resolves with
   * their ids.
   */
  async sweepUnfinished(removeLayer: (id: string) => Promise<void>): Promise<string[]> {
    const swept = this.unfinished.splice(0);
    for (const id of swept) {
      await removeLayer(id);
      await rm(this.dir(id), { recursive: true, force: true });
    }
    return swept;
  }

  /** The removals a crash cut short (records marked at the open): id -> whether the anonymous volumes go too. */
  interruptedRemovals(): Map<string, boolean> {
    return new Map([...this.interrupted].filter(([id]) => this.byId.has(id)));
  }

  /**
   * A new container's folder, on disk before its layer is made: a create that goes no further
   * leaves a folder without a record, whose layer the next start removes (`sweepUnfinished`).
   */
  async reserve(id: string): Promise<void> {
    this.makeDir(id);
    await syncDir(this.root);
  }

  /** Marks on disk that the container's removal has begun (`volumes`: its anonymous volumes go too): finished at the next start should a crash cut it short. */
  markRemoval(id: string, volumes: boolean): Promise<void> {
    return writeFileDurably(join(this.dir(id), REMOVAL_MARK), JSON.stringify({ volumes }));
  }

  /** A removal that failed half way (the container stays): its mark goes. */
  async unmarkRemoval(id: string): Promise<void> {
    this.interrupted.delete(id);
    await rm(join(this.dir(id), REMOVAL_MARK), { force: true });
  }

  dir(id: string): string {
    return join(this.root, id);
  }

  newId(): string {
    let id: string;
    do id = randomBytes(32).toString("hex");
    while (this.byId.has(id) || /^\d+$/.test(id.slice(0, 12)));
    return id;
  }

  /**
   * A name for container `id`: the one asked for (checked, unique) or a generated one, claimed
   * for it at once: a second create or rename that asks for it meanwhile gets the 409, as
   * Docker's name reservation gives it. The claim holds until a save of the record with that
   * name (then it is the record's), or `releaseName` (a create that failed).
   */
  claimName(wanted: string | undefined, id: string): string {
    let name: string;
    if (wanted === undefined || wanted === "") {
      name = `/${generateName((n) => this.names.has(`/${n}`))}`;
    } else {
      if (!NAME.test(wanted)) throw errors.containerInvalidName(wanted);
      name = wanted.startsWith("/") ? wanted : `/${wanted}`;
      const holder = this.names.get(name);
      if (holder !== undefined && holder !== id) throw errors.containerNameInUse(name, holder);
    }
    this.names.set(name, id);
    return name;
  }

  /** The id of the container that has (or claimed) `name` (`/web`), if any. */
  holderOf(name: string): string | undefined {
    return this.names.get(name);
  }

  /** A claim by `id` that no save made its record's (a create that failed): the name is free again. */
  releaseName(name: string, id: string): void {
    if (this.names.get(name) === id && this.savedName.get(id) !== name) this.names.delete(name);
  }

  /** The record's name is its: the name it had before (a rename) is free again. */
  private indexName(record: ContainerRecord): void {
    const before = this.savedName.get(record.Id);
    if (before === record.Name) return;
    if (before !== undefined && this.names.get(before) === record.Id) this.names.delete(before);
    this.names.set(record.Name, record.Id);
    this.savedName.set(record.Id, record.Name);
  }

  private byName(name: string): ContainerRecord | undefined {
    const id = this.names.get(name);
    const c = id === undefined ? undefined : this.byId.get(id);
    // a claim of a create under way has no record yet; a rename under way keeps the old name until saved
    return c?.Name === name || (c && this.savedName.get(c.Id) === name) ? c : undefined;
  }

  /** The child a link's name (`/web/db`) stands for, as Docker's name index has it. */
  private byLinkName(name: string): ContainerRecord | undefined {
    const cut = name.lastIndexOf("/");
    if (cut <= 0) return undefined;
    const link = this.byName(name.slice(0, cut))?.Links?.find((l) => l.Name === name);
    return link && this.byId.get(link.ChildId);
  }

  /** By full id, name (a link's name too), or unique id prefix; 404 `No such container: X` otherwise (400 for no name at all, as Docker's). */
  get(ref: string): ContainerRecord {
    if (ref === "") throw errors.containerInvalidIdentifier();
    const name = ref.startsWith("/") ? ref : `/${ref}`;
    const found = this.byId.get(ref) ?? this.byName(name) ?? this.byLinkName(name);
    if (found) return found;
    if (/^[a-f0-9]+$/.test(ref)) {
      const matches = [...this.byId.values()].filter((c) => c.Id.startsWith(ref));
      if (matches.length > 1) throw errors.containerAmbiguous(ref);
      if (matches[0]) return matches[0];
    }
    throw errors.containerNotFound(ref);
  }

  /** By full id only; undefined when there is none (no 404: for the daemon's own bookkeeping). */
  find(id: string): ContainerRecord | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Whether the container is there and not being removed: for a request that failed on its layer to tell a removal at the same moment. */
  present(id: string): boolean {
    return this.byId.has(id) && !this.removing.has(id);
  }

  /** Marks a removal under way (`remove` ends it; `removalFailed` when it stopped half way). */
  removalStarts(id: string): void {
    this.removing.add(id);
  }

  removalFailed(id: string): void {
    this.removing.delete(id);
  }

  list(): ContainerRecord[] {
    return [...this.byId.values()];
  }

  /**
   * A new container's record: kept (in memory at once) and written; resolves once it is on
   * disk. A record whose write fails is the caller's to take back (`remove`).
   */
  add(record: ContainerRecord): Promise<void> {
    this.makeDir(record.Id);
    this.byId.set(record.Id, record);
    this.indexName(record);
    return this.writer.write(this.recordPath(record.Id), () => jsonText(record));
  }

  /**
   * Writes a change to a container's record; resolves once it is on disk. A container removed
   * meanwhile stays removed: a late change (an exit, an update that raced a `docker rm -f`)
   * must not bring back a record whose layer is gone.
   */
  save(record: ContainerRecord): Promise<void> {
    if (!this.byId.has(record.Id)) {
      // a rename's claim for it goes too
      this.releaseName(record.Name, record.Id);
      return Promise.resolve();
    }
    this.byId.set(record.Id, record);
    this.indexName(record);
    return this.writer.write(this.recordPath(record.Id), () => jsonText(record));
  }

  /**
   * Writes the record as a start under way (see `PendingStart`): running, with its state now as
   * the state before. The record in memory stays as it is; the next `save` writes it over this.
   */
  savePendingStart(record: ContainerRecord): Promise<void> {
    const pending: ContainerRecord = { ...record, State: runningState(record.State, 0, record.State.StartedAt), PendingStart: { previous: record.State } };
    return this.writer.write(this.recordPath(record.Id), () => jsonText(pending));
  }

  private recordPath(id: string): string {
    return join(this.dir(id), "config.json");
  }

  /** A new container's folder, Docker's 0710: nobody else lists its logs and files. */
  private makeDir(id: string): void {
    const dir = this.dir(id);
    try {
      mkdirSync(dir, { mode: PASS_DIR });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (this.passGid !== undefined) chownSync(dir, 0, this.passGid);
  }

  /**
   * The record goes from memory at once, from the disk once a write of it under way has ended,
   * and the rest of the folder after it: a crash in between leaves a folder without a record,
   * which the next start removes (never a record whose log is half gone).
   */
  async remove(id: string): Promise<void> {
    this.removing.delete(id);
    this.interrupted.delete(id);
    this.byId.delete(id);
    const name = this.savedName.get(id);
    this.savedName.delete(id);
    if (name !== undefined && this.names.get(name) === id) {
      this.names.delete(name);
      // another record of that name, from before names were claimed, has it now
      const other = this.sharedNames ? [...this.byId.values()].find((c) => c.Name === name) : undefined;
      if (other) this.names.set(name, other.Id);
    }
    await this.writer.forget(this.recordPath(id));
    await rm(this.recordPath(id), { force: true });
    await syncDir(this.dir(id)).catch(() => undefined); // (no folder: nothing to flush)
    await rm(this.dir(id), { recursive: true, force: true });
  }

  /** Whether a container uses the image (its removal then answers 409). */
  usesImage(imageId: string): boolean {
    for (const c of this.byId.values()) if (usesAsImage(c, imageId)) return true;
    return false;
  }

  /** A running and a stopped container using the image, if any (what an image's removal asks). */
  imageUsers(imageId: string): { running?: string; stopped?: string } {
    const users: { running?: string; stopped?: string } = {};
    for (const c of this.byId.values()) {
      if (!usesAsImage(c, imageId)) continue;
      if (c.State.Running) users.running ??= c.Id;
      else users.stopped ??= c.Id;
      if (users.running && users.stopped) break;
    }
    return users;
  }
}

/** The container is made from the image, or mounts it (an `image` mount): either way it holds the image's layers. */
function usesAsImage(c: ContainerRecord, imageId: string): boolean {
  return c.Image === imageId || (c.Mounts ?? []).some((m) => m.Type === "image" && m.Image === imageId);
}
