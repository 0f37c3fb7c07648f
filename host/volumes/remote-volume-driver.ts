/**
 * A volume driver served by another process: a plugin written for Docker's daemon
 * (`VolumeDriver` in its `Plugin.Activate` answer), found by name as host/remote-plugins
 * describes, and spoken to over its socket (`POST /VolumeDriver.<Method>`, JSON both ways).
 * The plugin keeps its volumes; this adapter turns the contract's calls into the protocol's:
 *
 *   get -> Get {Name}            (an answer with `Err` means the plugin has no such volume)
 *   create -> Create {Name, Opts}
 *   list -> List {}
 *   mount -> Mount {Name, ID}    (ID: the container; the plugin counts its users by it)
 *   unmount -> Unmount {Name, ID}
 *   remove -> Remove {Name}
 *
 * `Capabilities` is asked once, when the driver is made: its `Scope` (`local` or `global`,
 * any case) is the volumes' scope; a plugin that does not answer it, or answers another
 * scope, is taken as `local`, as Docker's daemon takes it. Options are the plugin's to judge,
 * at `Create`. An `Err` in any answer is the call's failure, in the plugin's words.
 */
import type { VolumeDriver, VolumeInfo, VolumeScope } from "../../core/contracts/volume.js";
import type { PluginClient } from "../remote-plugins/client.js";
import type { RemotePlugin } from "../remote-plugins/remote-plugins.js";

export const VOLUME_DRIVER_INTERFACE = "VolumeDriver";

interface WireVolume {
  Name?: unknown;
  Mountpoint?: unknown;
  CreatedAt?: unknown;
  Status?: unknown;
}

/** What a plugin says of a volume, as the contract's VolumeInfo. */
function infoOf(v: WireVolume, fallbackName: string): VolumeInfo {
  const status = v.Status && typeof v.Status === "object" && !Array.isArray(v.Status) ? (v.Status as Record<string, unknown>) : undefined;
  return {
    name: typeof v.Name === "string" && v.Name !== "" ? v.Name : fallbackName,
    mountpoint: typeof v.Mountpoint === "string" ? v.Mountpoint : "",
    createdAt: typeof v.CreatedAt === "string" ? v.CreatedAt : "",
    options: {},
    ...(status ? { status } : {}),
  };
}

export class RemoteVolumeDriver implements VolumeDriver {
  readonly capabilities = [] as const;

  private constructor(
    readonly name: string,
    readonly scope: VolumeScope,
    private readonly client: PluginClient,
    /** Where the plugin is, for `/info`-style reports. */
    private readonly address: string,
    /** A mountpoint the plugin answers as the host's path. */
    private readonly scopePath: (path: string) => string,
  ) {}

  /** The driver, once the plugin is active, serves volumes, and has said its scope. */
  static async open({ name, client, activation, address, scopePath }: RemotePlugin): Promise<RemoteVolumeDriver> {
    await activation.require(VOLUME_DRIVER_INTERFACE);
    let scope: VolumeScope = "local";
    try {
      const answer = (await client.call("VolumeDriver.Capabilities", {})) as { Capabilities?: { Scope?: unknown } };
      const asked = String(answer.Capabilities?.Scope ?? "").toLowerCase();
      if (asked === "global") scope = "global";
    } catch {
      // an optional call: a plugin without it serves local volumes
    }
    return new RemoteVolumeDriver(name, scope, client, address, scopePath);
  }

  /** The answer of `method`, or its `Err` as the failure. */
  private async call<T>(method: string, body: Record<string, unknown>): Promise<T & { Err?: unknown }> {
    const answer = (await this.client.call(`VolumeDriver.${method}`, body)) as T & { Err?: unknown };
    if (typeof answer.Err === "string" && answer.Err !== "") throw new Error(answer.Err);
    return answer;
  }

  validateOptions(): void {
    // the plugin judges its options at Create
  }

  async create(name: string, options: Record<string, string>): Promise<VolumeInfo> {
    await this.call("Create", { Name: name, Opts: options });
    // Docker's daemon shows neither a mountpoint nor a time for a volume just made: the plugin says them at Get
    return { name, mountpoint: "", createdAt: "", options: { ...options } };
  }

  async get(name: string): Promise<VolumeInfo | undefined> {
    const answer = (await this.client.call("VolumeDriver.Get", { Name: name })) as { Volume?: WireVolume | null; Err?: unknown };
    // Any Err, or no volume, is "no such volume": plugins word it as they like
    if ((typeof answer.Err === "string" && answer.Err !== "") || !answer.Volume || typeof answer.Volume !== "object") return undefined;
    const info = infoOf(answer.Volume, name);
    return { ...info, mountpoint: this.scopePath(info.mountpoint) };
  }

  async list(): Promise<VolumeInfo[]> {
    const answer = await this.call<{ Volumes?: unknown }>("List", {});
    const volumes = Array.isArray(answer.Volumes) ? (answer.Volumes as WireVolume[]) : [];
    // (a list's times are not taken, as Docker's daemon does not take them: only a Get's)
    return volumes.filter((v) => v && typeof v === "object" && typeof v.Name === "string" && v.Name !== "").map((v) => ({ ...infoOf(v, ""), createdAt: "" }))
      .map((info) => ({ ...info, mountpoint: this.scopePath(info.mountpoint) }));
  }

  async mount(name: string, containerId: string): Promise<string> {
    const answer = await this.call<{ Mountpoint?: unknown }>("Mount", { Name: name, ID: containerId });
    if (typeof answer.Mountpoint !== "string" || answer.Mountpoint === "") throw new Error(`VolumeDriver.Mount: the plugin ${this.name} gave no mountpoint for ${name}`);
    return this.scopePath(answer.Mountpoint);
  }

  async unmount(name: string, containerId: string): Promise<void> {
    await this.call("Unmount", { Name: name, ID: containerId });
  }

  async remove(name: string): Promise<void> {
    await this.call("Remove", { Name: name });
  }

  async status(): Promise<[string, string][]> {
    return [["Plugin", this.address]];
  }
}
