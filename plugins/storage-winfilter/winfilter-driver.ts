/**
 * The winfilter storage driver: a skeleton. On the win platform, layers are kept by the host
 * compute service (vmcompute.dll, reached as Microsoft's hcsshim reaches it through its
 * `wclayer` functions): image layers are folders of files plus registry hives, a container's
 * writable layer is a sandbox VHDX seen through the Windows filter driver. This engine runs on
 * Linux and does not call those APIs: every operation checks its input as the real driver would
 * and then fails, saying which call it would make. Nothing here pretends to work (README.md).
 */
import type { Readable } from "node:stream";
import type { CreateOptions, LayerUsage, MountSpec, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { showBytes } from "../../core/options/value-types-structured.js";
import { sandboxSizeFor, winfilterOptionsOf, type WinfilterOptions } from "./options.js";

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export async function createWinfilterDriver(ctx: StorageContext): Promise<WinfilterDriver> {
  // The real driver would also refuse a home on a ReFS volume and create the home folder.
  return new WinfilterDriver(ctx.home, winfilterOptionsOf(ctx.options));
}

export class WinfilterDriver implements StorageDriver {
  readonly name = "winfilter";
  readonly capabilities: readonly StorageCapability[] = ["quota"];

  constructor(
    readonly home: string,
    readonly options: WinfilterOptions,
  ) {}

  /** The error every operation ends with: what the win platform's driver would call there. */
  private wouldCall(operation: string, calls: string): Error {
    return new Error(
      `winfilter: ${operation} is not implemented by this engine; on the win platform it is ${calls} of the host compute service (vmcompute.dll)`,
    );
  }

  private check(id: string): void {
    if (!ID_RE.test(id)) throw new Error(`winfilter: invalid layer id ${JSON.stringify(id)}`);
  }

  async status(): Promise<[string, string][]> {
    return [
      ["Windows", ""],
      ["Sandbox Size", showBytes(this.options.sandboxBytes)],
    ];
  }

  async cleanup(): Promise<void> {
    // The real driver destroys `<id>-removing` folders a crash left (DestroyLayer); there are none here.
  }

  async exists(id: string): Promise<boolean> {
    this.check(id);
    throw this.wouldCall("exists", "LayerExists");
  }

  async create(id: string, parent: string | undefined, opts: CreateOptions = {}): Promise<void> {
    this.check(id);
    if (parent !== undefined) this.check(parent);
    if (!opts.writable) {
      if (opts.storageOpts && Object.keys(opts.storageOpts).length > 0) {
        throw new Error(`winfilter: storage options apply to a container's sandbox only (layer ${id})`);
      }
      throw this.wouldCall("creating an image layer", "CreateLayer");
    }
    const bytes = sandboxSizeFor(opts, this.options);
    throw this.wouldCall(`creating a ${showBytes(bytes)} sandbox`, `CreateSandboxLayer on the parent's layer chain, then ExpandSandboxSize to ${bytes} bytes`);
  }

  async applyDiff(id: string, _tar: Readable): Promise<number> {
    this.check(id);
    throw this.wouldCall("applying a layer", "ImportLayer (the tar's files written as backup streams through a layer writer)");
  }

  async mounts(id: string): Promise<MountSpec[]> {
    this.check(id);
    throw this.wouldCall("mounting a layer", "ActivateLayer, PrepareLayer with the layer chain, then GetLayerMountPath (a volume path, not a Linux mount)");
  }

  async diff(id: string): Promise<Readable> {
    this.check(id);
    throw this.wouldCall("a layer's diff", "ExportLayer (a layer reader whose backup streams become tar entries)");
  }

  async usage(id: string): Promise<LayerUsage> {
    this.check(id);
    throw this.wouldCall("a layer's usage", "ActivateLayer and a walk of the layer reader's files");
  }

  async parent(id: string): Promise<string | undefined> {
    this.check(id);
    throw this.wouldCall("a layer's parent", "reading the layer chain the driver keeps beside each layer (layerchain.json)");
  }

  async remove(id: string): Promise<void> {
    this.check(id);
    throw this.wouldCall("removing a layer", "DestroyLayer (after renaming the layer folder to <id>-removing)");
  }
}
