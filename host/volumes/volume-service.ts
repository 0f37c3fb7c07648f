/**
 * The volumes of the daemon: create (idempotent for a name and its driver), look-up, list,
 * remove and prune, over the records (volume-store.ts) and the drivers (volume-drivers.ts).
 *
 * A volume is in use while a container's record names it in `Mounts`, running or not, as
 * Docker counts it; the references are read from the container records, so they survive a
 * restart with them. A container create that is making its volumes holds them too (`hold`),
 * so that a prune at that moment cannot take them. Creates and removals run one at a time.
 */
import { randomBytes } from "node:crypto";
import type { VolumeDriver, VolumeInfo, VolumeScope } from "../../core/contracts/volume.js";
import type { ContainerStore } from "../../core/containers/container-store.js";
import { EngineError, errors } from "../../core/errors.js";
import { killPoint } from "../../core/kill-points.js";
import { makeEvent } from "../../core/events/event.js";
import type { EngineHooks } from "../../core/hooks.js";
import { VOLUME_NAME } from "./mount-plan.js";
import { KeyedQueue } from "../../core/async/keyed-queue.js";
import type { VolumeDriverSource } from "./volume-drivers.js";
import { ANONYMOUS_LABEL, isAnonymous, type VolumeRecord, type VolumeStore } from "./volume-store.js";

/** A volume with what its driver says of it now. */
export interface LiveVolume {
  record: VolumeRecord;
  scope: VolumeScope;
  status?: Record<string, unknown>;
}

/** A driver's time as the records keep theirs (RFC 3339 to the second); Go's zero time when it gave none, as Docker shows it. */
function rfc3339Seconds(time: string): string {
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? "0001-01-01T00:00:00Z" : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

export interface VolumeCreate {
  name?: string;
  driver?: string;
  options?: Record<string, string> | null;
  labels?: Record<string, string> | null;
  /** A volume made for one container: a 64-hex name and the anonymous label. */
  anonymous?: boolean;
}

export interface VolumeServiceDeps {
  store: VolumeStore;
  drivers: VolumeDriverSource;
  /** Every volume driver served by another process, for lists (Docker asks them all). */
  remoteDrivers?: () => Promise<VolumeDriver[]>;
  /**
   * Told when a recorded volume of a driver comes (+1) or goes (-1): a managed plugin counts its
   * volumes as its users, so that it is not disabled or removed under them (Docker's refcount).
   */
  driverUse?: (driver: string, delta: 1 | -1) => void;
  containers: ContainerStore;
  hooks: EngineHooks;
}

export class VolumeService {
  private readonly queue = new KeyedQueue();
  private readonly held = new Map<string, number>();

  constructor(private readonly deps: VolumeServiceDeps) {}

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run("", fn);
  }

  private readonly loaded = new Set<string>();

  driver(name: string): Promise<VolumeDriver> {
    return this.deps.drivers(name).then((d) => (this.loaded.add(name), d));
  }

  /** The drivers made so far. */
  driverNames(): string[] {
    return [...this.loaded];
  }

  /** The volume; 404 when there is none. */
  get(name: string): VolumeRecord {
    const rec = this.deps.store.get(name);
    if (!rec) throw errors.volumeNotFound(name);
    return rec;
  }

  find(name: string): VolumeRecord | undefined {
    return this.deps.store.get(name);
  }

  list(): VolumeRecord[] {
    return this.deps.store.list();
  }

  /**
   * The volume as its driver has it now (inspect): a driver other than `local` is the
   * authority on its volumes, so it is asked for the time, mountpoint and status, and a volume
   * it no longer has is gone (404), its record too unless a container still names it.
   */
  async inspect(name: string): Promise<LiveVolume> {
    const record = this.find(name);
    if (!record) {
      const found = await this.unrecorded(name);
      if (!found) throw errors.volumeNotFound(name);
      const { driver, info } = found;
      const CreatedAt = rfc3339Seconds(info.createdAt);
      return {
        record: { Name: name, Driver: driver.name, CreatedAt, Labels: null, Options: null, Mountpoint: info.mountpoint },
        scope: driver.scope,
        ...(info.status ? { status: info.status } : {}),
      };
    }
    if (record.Driver === "local") return { record, scope: "local" };
    const driver = await this.driver(record.Driver);
    const info = await driver.get(name).catch((err: Error) => {
      throw errors.volumeDriverFailed("get", name, err.message);
    });
    if (!info) {
      if (!this.inUse(name)) {
        await this.deps.store.remove(name);
        this.deps.driverUse?.(record.Driver, -1);
      }
      throw errors.volumeNotFound(name);
    }
    return {
      record: { ...record, Mountpoint: info.mountpoint, CreatedAt: rfc3339Seconds(info.createdAt) },
      scope: driver.scope,
      ...(info.status ? { status: info.status } : {}),
    };
  }

  /**
   * A volume the daemon has no record of, that a plugin of another process has (made outside
   * the daemon): Docker's daemon finds those by asking every volume plugin.
   */
  private async unrecorded(name: string): Promise<{ driver: VolumeDriver; info: VolumeInfo } | undefined> {
    for (const driver of (await this.deps.remoteDrivers?.().catch(() => [])) ?? []) {
      const info = await driver.get(name).catch(() => undefined);
      if (info) return { driver, info };
    }
    return undefined;
  }

  /**
   * Every volume, as Docker lists them: `local`'s from the records, every other driver's from
   * the driver's own list (with what the records add: labels, options), those made outside the
   * daemon included; the time and mountpoint are the driver's. A driver that cannot list is a
   * warning, and its volumes are shown as recorded.
   */
  async listLive(): Promise<{ volumes: LiveVolume[]; warnings: string[] }> {
    const records = this.list();
    const volumes: LiveVolume[] = records.filter((r) => r.Driver === "local").map((record) => ({ record, scope: "local" as const }));
    const warnings: string[] = [];
    const drivers = new Map<string, Promise<VolumeDriver>>();
    for (const r of records) if (r.Driver !== "local" && !drivers.has(r.Driver)) drivers.set(r.Driver, this.driver(r.Driver));
    for (const d of (await this.deps.remoteDrivers?.().catch(() => [])) ?? []) if (!drivers.has(d.name)) drivers.set(d.name, Promise.resolve(d));
    const lists = await Promise.all(
      [...drivers].map(async ([name, made]) => {
        try {
          const driver = await made;
          return { name, driver, infos: await driver.list() };
        } catch (err) {
          warnings.push(`list ${name}: ${(err as Error).message}`);
          return { name, driver: undefined, infos: undefined };
        }
      }),
    );
    for (const listed of lists) {
      if (!listed.infos) {
        // a driver that cannot list still has the volumes the daemon recorded, as Docker shows them
        for (const record of records) if (record.Driver === listed.name) volumes.push({ record: { ...record, CreatedAt: rfc3339Seconds("") }, scope: "local" });
        continue;
      }
      for (const info of listed.infos) {
        const record = this.deps.store.get(info.name);
        // a name another driver's record holds is that driver's volume
        if (record && record.Driver !== listed.name) continue;
        const live = { Mountpoint: info.mountpoint, CreatedAt: rfc3339Seconds(info.createdAt) };
        volumes.push({
          record: record ? { ...record, ...live } : { Name: info.name, Driver: listed.name, Labels: null, Options: null, ...live },
          scope: listed.driver.scope,
        });
      }
    }
    return { volumes, warnings };
  }

  /** Ids of the containers whose records use the volume. */
  users(name: string): string[] {
    return this.deps.containers
      .list()
      .filter((c) => c.Mounts?.some((m) => m.Type === "volume" && m.Name === name))
      .map((c) => c.Id);
  }

  inUse(name: string): boolean {
    return (this.held.get(name) ?? 0) > 0 || this.users(name).length > 0;
  }

  /** Keeps the volume from removal until the returned release is called. */
  hold(name: string): () => void {
    this.held.set(name, (this.held.get(name) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.held.get(name) ?? 1) - 1;
      if (n > 0) this.held.set(name, n);
      else this.held.delete(name);
    };
  }

  /**
   * Checks a create's driver and options without making anything. No driver (`""`) takes an
   * existing volume's, whatever it is, else `local`.
   */
  async check(name: string, driverName: string, options: Record<string, string>): Promise<void> {
    const existing = this.deps.store.get(name);
    if (existing) {
      if (driverName && existing.Driver !== driverName) throw errors.volumeNameConflict(name, existing.Driver, driverName);
      return;
    }
    const driver = await this.createDriver(driverName, name);
    try {
      driver.validateOptions(options);
    } catch (err) {
      throw errors.volumeInvalidOptions(name, (err as Error).message);
    }
  }

  /** The driver a create names (`""`: local), a missing one refused in the create's words. */
  private createDriver(driverName: string, volume: string): Promise<VolumeDriver> {
    return this.driver(driverName || "local").catch((err: unknown) => {
      if (!(err instanceof EngineError)) throw err;
      if (err.code === errors.volumeDriverNotFound.code) throw errors.volumeDriverNotFound(driverName, volume);
      // (a create names its volume first, as Docker's does)
      if (err.code === errors.volumePluginUnusable.code) throw new EngineError(err.code, err.statusCode, `create ${volume}: ${err.message}`);
      throw err;
    });
  }

  /** The volume of that name (made when missing); the same name with another driver is a 409. */
  create(req: VolumeCreate): Promise<{ volume: VolumeRecord; created: boolean }> {
    const name = req.name || randomBytes(32).toString("hex");
    // In Docker the name is judged by the local driver, once the driver is found: a driver that
    // does not exist is what a create with a bad name and a bad driver is told about.
    if (!VOLUME_NAME.test(name)) return this.createDriver(req.driver ?? "", name).then(() => Promise.reject(errors.volumeInvalidName(name)));
    // (its record is `<name>.json`, within the 255 bytes a file name has)
    if (Buffer.byteLength(name) > 250) return Promise.reject(errors.volumeNameTooLong(name));
    const options = req.options ?? {};
    return this.serial(async () => {
      const adopted = await this.adoptFromPlugin(name, req);
      if (adopted) return { volume: adopted, created: false };
      await this.check(name, req.driver ?? "", options);
      const existing = this.deps.store.get(name);
      if (existing) return { volume: existing, created: false };
      const driverName = req.driver || "local";
      const driver = await this.driver(driverName);
      let info;
      try {
        // A volume the driver kept but the daemon lost the record of (a crash between the two) is taken back.
        info = (await driver.get(name)) ?? (await driver.create(name, options));
        killPoint("volume.driver-made");
      } catch (err) {
        throw err instanceof EngineError ? err : errors.volumeDriverFailed("create", name, (err as Error).message);
      }
      // A create without a name is anonymous too, as Docker's: `docker volume prune` takes it.
      const labels = req.anonymous || !req.name ? { ...(req.labels ?? {}), [ANONYMOUS_LABEL]: "" } : req.labels ?? null;
      const volume: VolumeRecord = {
        Name: name,
        Driver: driverName,
        // (another driver's volumes have its time, Docker's zero time when it gives none)
        CreatedAt: rfc3339Seconds(driverName === "local" ? new Date().toISOString() : info.createdAt),
        Labels: labels,
        Options: Object.keys(options).length > 0 ? { ...options } : null,
        Mountpoint: info.mountpoint,
      };
      await this.deps.store.save(volume);
      killPoint("volume.saved");
      this.deps.driverUse?.(driverName, 1);
      this.deps.hooks.event.call(makeEvent("volume", "create", name, { driver: driverName }));
      return { volume, created: true };
    });
  }

  /**
   * A create that names no driver, of a name the daemon has no record of, takes the volume a
   * plugin of another process has under that name (made outside the daemon), as Docker's
   * daemon asks every volume plugin before it makes a `local` one. It is recorded with its
   * plugin; no volume is made, so there is no create event.
   */
  private async adoptFromPlugin(name: string, req: VolumeCreate): Promise<VolumeRecord | undefined> {
    if (req.driver || req.anonymous || !req.name || this.deps.store.get(name)) return undefined;
    const found = await this.unrecorded(name);
    if (!found) return undefined;
    const volume: VolumeRecord = {
      Name: name,
      Driver: found.driver.name,
      CreatedAt: rfc3339Seconds(found.info.createdAt),
      Labels: req.labels ?? null,
      Options: null,
      Mountpoint: found.info.mountpoint,
    };
    await this.deps.store.save(volume);
    this.loaded.add(found.driver.name);
    this.deps.driverUse?.(found.driver.name, 1);
    return volume;
  }

  /**
   * At the daemon's start: the volumes the `local` driver has and no record names (a create a
   * crash cut short between the driver and the record) are recorded, as Docker's daemon lists
   * every volume its local driver finds. Resolves with their names.
   */
  async adoptUnrecorded(): Promise<string[]> {
    const driver = await this.driver("local");
    const adopted: string[] = [];
    for (const info of await driver.list()) {
      if (this.deps.store.get(info.name)) continue;
      const options = info.options ?? {};
      await this.deps.store.save({
        Name: info.name,
        Driver: "local",
        CreatedAt: rfc3339Seconds(info.createdAt),
        Labels: null,
        Options: Object.keys(options).length > 0 ? { ...options } : null,
        Mountpoint: info.mountpoint,
      });
      adopted.push(info.name);
    }
    return adopted;
  }

  /** Removes the volume and its data; 409 while a container uses it, 404 when there is none. */
  remove(name: string): Promise<void> {
    return this.serial(async () => {
      const rec = this.find(name);
      if (!rec) return this.removeUnrecorded(name);
      const users = this.users(name);
      if (users.length > 0 || (this.held.get(name) ?? 0) > 0) throw errors.volumeInUse(name, users);
      const driver = await this.driver(rec.Driver);
      try {
        await driver.remove(name);
      } catch (err) {
        throw errors.volumeDriverFailed("remove", name, (err as Error).message);
      }
      await this.deps.store.remove(name);
      this.deps.driverUse?.(rec.Driver, -1);
      this.deps.hooks.event.call(makeEvent("volume", "destroy", name, { driver: rec.Driver }));
    });
  }

  /** A volume only a plugin of another process has (see `unrecorded`) is removed from it. */
  private async removeUnrecorded(name: string): Promise<void> {
    const found = await this.unrecorded(name);
    if (!found) throw errors.volumeNotFound(name);
    try {
      await found.driver.remove(name);
    } catch (err) {
      throw errors.volumeDriverFailed("remove", name, (err as Error).message);
    }
    this.deps.hooks.event.call(makeEvent("volume", "destroy", name, { driver: found.driver.name }));
  }

  /** Bytes the volume holds, -1 when its driver cannot say. */
  async usage(rec: VolumeRecord): Promise<number> {
    try {
      const driver = await this.driver(rec.Driver);
      return driver.usage ? await driver.usage(rec.Name) : -1;
    } catch {
      return -1;
    }
  }

  /**
   * Removes every unused volume `pick` accepts; resolves with their names and bytes. As Docker's
   * prune: only `local` volumes, and of those not the ones made with options (an NFS or tmpfs
   * mount is not local data); a volume that cannot be removed stays, and the prune goes on.
   */
  async prune(pick: (v: VolumeRecord) => boolean): Promise<{ deleted: string[]; reclaimed: number }> {
    const deleted: string[] = [];
    let reclaimed = 0;
    for (const v of this.list()) {
      if (v.Driver !== "local" || (v.Options && Object.keys(v.Options).length > 0) || !pick(v) || this.inUse(v.Name)) continue;
      const size = await this.usage(v);
      try {
        await this.remove(v.Name);
      } catch {
        continue;
      }
      deleted.push(v.Name);
      if (size > 0) reclaimed += size;
    }
    this.deps.hooks.event.call(makeEvent("volume", "prune", "", { reclaimed: String(reclaimed) }));
    return { deleted, reclaimed };
  }
}

export { isAnonymous };
