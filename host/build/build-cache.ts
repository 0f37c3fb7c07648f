/**
 * The classic builder's cache: a step is reused when an image made from the same parent was
 * recorded with the same configuration (`container_config`, whose `Cmd` names the step, with the
 * checksum of what a COPY or ADD copied). Among several, the newest wins, as in Docker.
 * `cachefrom` narrows the candidates to the named images and their ancestors.
 */
import type { ContainerConfig } from "../../core/images/image-config.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import type { CacheUse } from "./cache-ledger.js";

/** The fields whose equality makes a step the same step. */
const KEYS = ["Cmd", "Entrypoint", "Env", "Labels", "ExposedPorts", "Volumes", "User", "WorkingDir", "Shell", "OnBuild", "Healthcheck", "StopSignal", "Tty", "OpenStdin"] as const;

function sameValue(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) => v === undefined || v === null || v === "" || v === false || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

/** Objects with their keys in order (labels and ports are maps: their order means nothing). */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
  return v;
}

function sameStep(a: ContainerConfig | undefined, b: ContainerConfig): boolean {
  if (!a) return false;
  return KEYS.every((k) => sameValue(a[k], b[k]));
}

export class BuildCache {
  private readonly allowed: Set<string> | undefined;

  /**
   * `cacheFrom`: image names whose chains may serve as cache (none given: every local image);
   * `use`: where the build's hits and new images are recorded (host/build/cache-ledger.ts).
   */
  constructor(
    private readonly images: ImageStore,
    cacheFrom: readonly string[],
    private readonly disabled: boolean,
    private readonly use?: CacheUse,
  ) {
    if (cacheFrom.length === 0) return;
    this.allowed = new Set();
    for (const name of cacheFrom) {
      let image: Image | undefined;
      try {
        image = images.resolve(name);
      } catch {
        continue; // Docker ignores a cache source it does not have
      }
      for (let id: string | undefined = image.id; id && !this.allowed.has(id); id = images.byId(id)?.parent) this.allowed.add(id);
    }
  }

  /** The image a step with `config` on `parent` made before, or undefined. */
  find(parent: Image | undefined, config: ContainerConfig): Image | undefined {
    if (this.disabled) return undefined;
    const candidates = this.images.childrenOf(parent?.id)
      .filter((id) => !this.allowed || this.allowed.has(id))
      .map((id) => this.images.byId(id))
      .filter((i): i is Image => i !== undefined && sameStep(i.config.container_config as ContainerConfig | undefined, config));
    const time = (i: Image) => Date.parse(i.config.created ?? "") || 0;
    return candidates.sort((a, b) => time(b) - time(a))[0];
  }

  /** A step used `image`, found by `find`. */
  hit(image: Image): void {
    this.use?.hit(image);
  }

  /** A step made `image`. */
  made(image: Image): void {
    this.use?.made(image);
  }
}
