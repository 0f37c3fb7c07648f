/**
 * The CRI's ImageService over the daemon's own image store: the images a kubelet sees are the
 * ones `docker images` lists, a `docker pull` is seen here and a PullImage there. Pulls go
 * through the same code as `POST /images/create` (host/images/pull.ts), with the daemon's
 * mirrors, insecure-registry rules, certs.d and download limits; removals through the store's
 * delete, refusing an image a container (Docker's or a CRI one) uses.
 *
 * An image's CRI id is its image ID (`sha256:<hex>`), repo_tags its tagged references and
 * repo_digests its digested ones, both in full (`docker.io/library/busybox:latest`), as
 * containerd's CRI plugin shows them; the kubelet matches them against the pod's image names.
 */
import type { EngineHooks } from "../../core/hooks.js";
import { errors, EngineError } from "../../core/errors.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { formatReference, parseReference, type Reference } from "../../core/images/reference.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { Credentials } from "../registry/auth.js";
import type { RegistryService } from "../registry/registry.js";
import { hostPlatform } from "../registry/manifests.js";
import { imageDeleteEvents, imageTransferEvent } from "../images/image-events.js";
import type { CriHandlers } from "./cri-server.js";
import { nowNanos } from "./nanos.js";

export interface CriImageDeps {
  store: ImageStore;
  storage: StorageDriver;
  /** The storage driver's home, reported as the image filesystem's mount point. */
  storageHome: string;
  registry: RegistryService;
  hooks: EngineHooks;
  limits: () => { downloads: number; attempts: number; disablePigz: boolean };
  /** Whether a container (Docker's or the CRI's) uses the image. */
  inUse: (id: string) => boolean;
}

interface ImageSpecMsg {
  image: string;
}

/** The image a spec names, or undefined when the store has none by that name. */
export function findImage(store: ImageStore, name: string): Image | undefined {
  try {
    return store.resolve(name);
  } catch (err) {
    if (err instanceof EngineError && err.statusCode === 404) return undefined;
    // a name that cannot be a reference names nothing here either; other failures are real
    if (err instanceof EngineError && err.statusCode === 400) return undefined;
    throw err;
  }
}

/** The `image.image` field of a request, required. */
function specName(spec: ImageSpecMsg | null | undefined, field: string): string {
  const name = spec?.image?.trim() ?? "";
  if (!name) throw errors.criInvalidArgument(`${field}.image`, "an image reference or ID is required");
  return name;
}

/** The image's user as the CRI reports it: a number as uid, a name as username. */
function userOf(image: Image): { uid: { value: string } | null; username: string } {
  const user = (image.config.config?.User ?? "").split(":")[0];
  if (user === "") return { uid: null, username: "" };
  if (/^\d+$/.test(user)) return { uid: { value: user }, username: "" };
  return { uid: null, username: user };
}

export function criImage(image: Image): object {
  return {
    id: image.id,
    repoTags: image.references.filter((r) => !r.includes("@")),
    repoDigests: image.references.filter((r) => r.includes("@")),
    size: String(image.size),
    ...userOf(image),
    spec: { image: image.id, annotations: {} },
    pinned: false,
  };
}

/** `AuthConfig` as the registry client's credentials; `auth` (base64 user:password) fills in a missing name and password. */
function credentialsOf(auth: Record<string, string> | null): Credentials | undefined {
  if (!auth) return undefined;
  let { username, password } = auth;
  if (auth.auth && !username && !password) {
    const decoded = Buffer.from(auth.auth, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) throw errors.criInvalidArgument("auth.auth", "expected the base64 of <username>:<password>");
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  const out: Credentials = {};
  if (username) out.username = username;
  if (password) out.password = password;
  if (auth.identityToken) out.identitytoken = auth.identityToken;
  if (auth.registryToken) out.registrytoken = auth.registryToken;
  if (auth.serverAddress) out.serveraddress = auth.serverAddress;
  return Object.keys(out).length ? out : undefined;
}

function referenceOf(name: string, field: string): Reference {
  try {
    return parseReference(name);
  } catch (err) {
    throw errors.criInvalidArgument(field, (err as Error).message);
  }
}

export function criImageHandlers(deps: CriImageDeps): CriHandlers {
  const { store } = deps;
  return {
    async ListImages(req: { filter: { image: ImageSpecMsg | null } | null }) {
      const wanted = req.filter?.image?.image?.trim();
      if (wanted) {
        const image = findImage(store, wanted);
        return { images: image ? [criImage(image)] : [] };
      }
      return { images: store.list().map(criImage) };
    },

    async ImageStatus(req: { image: ImageSpecMsg | null; verbose: boolean }) {
      const image = findImage(store, specName(req.image, "image"));
      // Not here is an answer, not an error: the kubelet pulls then.
      if (!image) return { image: null, info: {} };
      const info: Record<string, string> = req.verbose
        ? { info: JSON.stringify({ id: image.id, chainIds: image.chain, config: image.config, stored: image.stored }) }
        : {};
      return { image: criImage(image), info };
    },

    async PullImage(req: { image: ImageSpecMsg | null; auth: Record<string, string> | null }, call?: { cancelled: AbortSignal }) {
      const name = specName(req.image, "image");
      const ref = referenceOf(name, "image.image");
      const credentials = credentialsOf(req.auth);
      const { pullImage } = await import("../images/pull.js");
      const limits = deps.limits();
      await pullImage(
        { store, registry: deps.registry, limits: () => limits, received: (bytes) => deps.hooks.receivedImageBytes.call(bytes) },
        // the pull stops with its call: a kubelet (or critest) that gave up on it (its deadline) does
        // not get an image pulled behind its back, as containerd's pull ends with its context
        { reference: ref, allTags: false, credentials, platform: hostPlatform(), signal: call?.cancelled ?? new AbortController().signal, emit: () => {}, drained: async () => {} },
      );
      deps.hooks.event.call(imageTransferEvent(store, "pull", formatReference(ref)));
      const image = store.resolve(formatReference(ref));
      return { imageRef: image.id };
    },

    async RemoveImage(req: { image: ImageSpecMsg | null }) {
      const image = findImage(store, specName(req.image, "image"));
      // Removing what is not there succeeds: the call is idempotent.
      if (!image) return {};
      if (deps.inUse(image.id)) throw errors.imageConflict(`unable to remove image ${image.id}: it is used by a container`);
      // Every name goes with the image, as containerd removes every reference of the ID.
      let entries;
      const ancestors = store.ancestors(image);
      try {
        entries = await store.delete(image.id, { force: true, noprune: false });
      } catch (err) {
        // Removed by a RemoveImage running at the same time (the store's deletes run one after
        // the other): gone is what was asked, as the first call answers (critest calls it five
        // times at once and wants five successes).
        if (err instanceof EngineError && err.statusCode === 404) return {};
        throw err;
      }
      for (const e of imageDeleteEvents(image, entries, ancestors)) deps.hooks.event.call(e);
      return {};
    },

    async ImageFsInfo() {
      let bytes = 0;
      let inodes = 0;
      for (const layer of store.layers.list()) {
        bytes += layer.size;
        const usage = await deps.storage.usage(layer.chainId.slice("sha256:".length)).catch(() => undefined);
        inodes += usage?.inodes ?? 0;
      }
      const usage = { timestamp: nowNanos(), fsId: { mountpoint: deps.storageHome }, usedBytes: { value: String(bytes) }, inodesUsed: { value: String(inodes) } };
      return { imageFilesystems: [usage], containerFilesystems: [] };
    },
  };
}
