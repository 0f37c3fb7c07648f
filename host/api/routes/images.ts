/**
 * The image endpoints: list, inspect, history, tag, remove, prune, import, load, save, and the
 * image part of `/system/df`. Names may hold `/` and `:`, so the routes that take a name read it
 * from the rest of the path.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PassThrough, type Readable } from "node:stream";
import { EngineError, errors, toEngineError } from "../../../core/errors.js";
import { makeEvent } from "../../../core/events/event.js";
import type { Image, ImageStore } from "../../../core/images/image-store.js";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import { graphDriverData } from "../graph-driver.js";
import { checkTag, familiarName, formatReference, parseReference, refuseIdAsName, repoTagReference, repositoryOf } from "../../../core/images/reference.js";
import type { SaveItem } from "../../images/save-images.js";
import { inspectConfig } from "../../images/inspect-config.js";
import { isComposeV1 } from "../../images/compose-legacy.js";
import { checkImagePlatform, decodeRemovePlatforms } from "../../images/platform-param.js";
import { checkCreatePlatform } from "../../containers/create-platform.js";
import { compareApiVersions } from "../../../core/version.js";
import { requestedApiVersion } from "../api-version.js";
import { checkFilterKeys, filterBool, queryBool, queryFilters, queryList, queryString, type Query } from "../query.js";
import { imageFilter, matchingReferences } from "./image-filters.js";
import { progressStream } from "../progress-stream.js";
import { decodeAuthHeader } from "../../registry/auth-header.js";
import { parsePlatform, type Platform } from "../../registry/manifests.js";
import type { RegistryService } from "../../registry/registry.js";
import type { EngineHooks } from "../../../core/hooks.js";
import { imageDeleteEvents, imageEvent, imageTagEvent, imageTransferEvent } from "../../images/image-events.js";

// Import, load and save bring undici, tar-stream and the archive code: loaded on first use so
// that a daemon start does not pay for them.
const importing = () => import("../../images/import-image.js");
const loading = () => import("../../images/load-images.js");
const saving = () => import("../../images/save-images.js");
const pulling = () => import("../../images/pull.js");
const pushing = () => import("../../images/push.js");

export interface ImageRouteDeps {
  store: ImageStore;
  /** The storage driver: its name, and the folders of an image's top layer for inspect. */
  driver: Pick<StorageDriver, "name" | "metadata">;
  disablePigz: () => boolean;
  registry: RegistryService;
  /** The registry limits as configured now (a reload changes the next pull or push). */
  limits: () => { downloads: number; uploads: number; attempts: number };
  /** Whether a container uses the image (409 on removal); none do until containers exist. */
  inUse?: (id: string) => boolean;
  /** How many containers each image has (by image ID), for the list's `Containers` from API 1.51. */
  containerCounts?: () => Map<string, number>;
  hooks: EngineHooks;
}

const seconds = (iso?: string) => (iso ? Math.floor(Date.parse(iso) / 1000) : 0);
const tagsOf = (image: Image) => image.references.filter((r) => !r.includes("@")).map(familiarName);
const digestsOf = (image: Image) => image.references.filter((r) => r.includes("@")).map(familiarName);

/** The image a commit was made from, while the store has it. */
const parentOf = (image: Image, store: ImageStore) => (image.parent && store.has(image.parent) ? image.parent : "");

export function summary(image: Image, apiVersion: string, store?: ImageStore): Record<string, unknown> {
  return {
    Id: image.id,
    ParentId: store ? parentOf(image, store) : "",
    RepoTags: tagsOf(image),
    RepoDigests: digestsOf(image),
    Created: seconds(image.config.created),
    Size: image.size,
    SharedSize: -1,
    ...(compareApiVersions(apiVersion, "1.44") < 0 ? { VirtualSize: image.size } : {}),
    // (null for an image without labels, as Docker's summary copies the config's nil map)
    Labels: image.config.config?.Labels ?? null,
    Containers: -1,
  };
}

/**
 * A list item's names as clients before API 1.43 had them: `<none>:<none>` and `<none>@<none>`
 * for an image without either, else an empty list as null (Go's nil slice), as Docker's route
 * shows them.
 */
function olderNames(item: Record<string, unknown>, apiVersion: string): Record<string, unknown> {
  if (compareApiVersions(apiVersion, "1.43") >= 0) return item;
  const [tags, digests] = [item.RepoTags as string[], item.RepoDigests as string[]];
  if (tags.length === 0 && digests.length === 0) return { ...item, RepoTags: ["<none>:<none>"], RepoDigests: ["<none>@<none>"] };
  return { ...item, RepoTags: tags.length ? tags : null, RepoDigests: digests.length ? digests : null };
}

/** Each image's layers that other images have too, their sizes summed (Docker's reference count by chain ID). */
function sharedSizes(images: readonly Image[], store: ImageStore): (image: Image) => number {
  const users = new Map<string, number>();
  for (const image of images) for (const chainId of image.chain) users.set(chainId, (users.get(chainId) ?? 0) + 1);
  return (image) => image.chain.filter((c) => (users.get(c) ?? 0) > 1).reduce((sum, c) => sum + (store.layers.get(c)?.size ?? 0), 0);
}

/** What an image that was not committed or built shows as its ContainerConfig: Docker's empty container config. */
const EMPTY_CONTAINER_CONFIG = {
  Hostname: "", Domainname: "", User: "", AttachStdin: false, AttachStdout: false, AttachStderr: false,
  Tty: false, OpenStdin: false, StdinOnce: false, Env: null, Cmd: null, Image: "", Volumes: null,
  WorkingDir: "", Entrypoint: null, OnBuild: null, Labels: null,
};

/**
 * An image's `GraphDriver`: the driver's folders of its top layer (Docker's GetMetadata of the
 * image's layer).
 */
async function graphDriver(image: Image, driver: ImageRouteDeps["driver"]): Promise<{ Name: string; Data: Record<string, string> | null }> {
  const top = image.chain.at(-1);
  const data = top && driver.metadata ? await driver.metadata(top.slice("sha256:".length)).catch(() => undefined) : undefined;
  return { Name: driver.name, Data: graphDriverData(data) };
}

/**
 * `Container` and `ContainerConfig`, which Docker's daemon shows below API 1.45 only: the
 * container only when the image has one (Docker 28's field is omitempty), its configuration
 * always. `keep` shows them at every version (docker-compose 1.x: compose-legacy.ts).
 */
function legacyContainerFields(c: Image["config"], apiVersion: string, keep: boolean): Record<string, unknown> {
  if (!keep && compareApiVersions(apiVersion, "1.45") >= 0) return {};
  return {
    ...(typeof c.container === "string" && c.container ? { Container: c.container } : {}),
    ContainerConfig: c.container_config ?? EMPTY_CONTAINER_CONFIG,
  };
}

function inspect(image: Image, store: ImageStore, graph: { Name: string; Data: Record<string, string> | null }, apiVersion: string, legacy: boolean): Record<string, unknown> {
  const c = image.config;
  const history = c.history ?? [];
  return {
    Id: image.id,
    RepoTags: tagsOf(image),
    RepoDigests: digestsOf(image),
    Parent: parentOf(image, store),
    // Docker shows the last history entry's comment when the image has none of its own (a commit's -m)
    Comment: c.comment || (history.at(-1)?.comment ?? ""),
    // an image without a creation time (moby's Dangling test image) has none from API 1.44,
    // Go's zero time before (moby's issue 47368)
    ...(c.created ? { Created: c.created } : compareApiVersions(apiVersion, "1.44") < 0 ? { Created: "0001-01-01T00:00:00Z" } : {}),
    ...legacyContainerFields(c, apiVersion, legacy),
    DockerVersion: c.docker_version ?? "",
    Author: c.author ?? "",
    Config: inspectConfig(c.config, apiVersion),
    Architecture: c.architecture ?? "",
    ...(c.variant ? { Variant: c.variant } : {}),
    Os: c.os ?? "",
    Size: image.size,
    // left out from API 1.44, as in the list and in system df
    ...(compareApiVersions(apiVersion, "1.44") < 0 ? { VirtualSize: image.size } : {}),
    GraphDriver: graph,
    // (no Layers for an image without layers: Docker's field is omitempty)
    RootFS: { Type: "layers", ...(c.rootfs.diff_ids.length ? { Layers: c.rootfs.diff_ids } : {}) },
    Metadata: { LastTagTime: image.lastTagTime ?? "0001-01-01T00:00:00Z" },
  };
}

function history(image: Image, store: ImageStore): Record<string, unknown>[] {
  const entries = image.config.history ?? [];
  const out: Record<string, unknown>[] = [];
  let layer = 0;
  for (const entry of entries) {
    const chainId = entry.empty_layer ? undefined : image.chain[layer++];
    // in the order of Docker's HistoryResponseItem (generated from its API description: by name)
    out.push({
      Comment: entry.comment ?? "",
      Created: seconds(entry.created),
      CreatedBy: entry.created_by ?? "",
      Id: "<missing>",
      Size: chainId ? (store.layers.get(chainId)?.size ?? 0) : 0,
      Tags: null,
    });
  }
  out.reverse();
  // The newest entries are the image and, one by one, the images it was committed from.
  let current: Image | undefined = image;
  for (const entry of out) {
    if (!current) break;
    Object.assign(entry, { Id: current.id, Tags: tagsOf(current).length ? tagsOf(current) : null });
    current = current.parent ? store.byId(current.parent) : undefined;
  }
  return out;
}

/**
 * `GET /images/{name}/json` and friends: the name and the action at the end of the path (which
 * the router has decoded: a second decoding would read `%25` as a broken escape).
 */
function nameAndAction(request: FastifyRequest, actions: readonly string[]): { name: string; action: string } {
  const rest = (request.params as { "*": string })["*"];
  for (const action of actions) {
    if (rest.endsWith(`/${action}`)) return { name: rest.slice(0, -action.length - 1), action };
  }
  return { name: rest, action: "" };
}

/**
 * A stream of JSON messages. The Docker CLI renders them only when the type is exactly
 * `application/json` (with a charset it prints the raw lines), so the body goes as bytes.
 */
function jsonLines(reply: FastifyReply, lines: unknown[]): FastifyReply {
  return reply.header("content-type", "application/json").send(Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"));
}

export function imageRoutes(deps: ImageRouteDeps) {
  const { store } = deps;
  return (app: FastifyInstance) => {
    app.get("/images/json", async (request) => {
      const query = request.query as Query;
      const filters = queryFilters(query);
      const version = requestedApiVersion(request.raw);
      // below API 1.41, `filter` (a pattern of names, Docker 1.12's) is a reference filter more
      const oldFilter = compareApiVersions(version, "1.41") < 0 ? queryString(query, "filter") : undefined;
      if (oldFilter) filters.set("reference", [...(filters.get("reference") ?? []), oldFilter]);
      checkFilterKeys(filters, ["reference", "dangling", "label", "before", "since", "until"]);
      const keep = imageFilter(filters, store);
      // newest first, to the millisecond: a committed image comes before its parent (`rmi $(images -aq)` then works)
      const all = store.list();
      // Docker lists a build's intermediate images (no name, images made from them) only with `all`
      const parents = new Set(all.map((i) => i.parent));
      const shown = queryBool(query, "all") ? all : all.filter((i) => i.references.length > 0 || !parents.has(i.id));
      // each creation time read once, not at each comparison of the sort
      const created = new Map(shown.map((i) => [i.id, Date.parse(i.config.created ?? "") || 0]));
      const newest = (a: Image, b: Image) => created.get(b.id)! - created.get(a.id)! || (a.parent === b.id ? -1 : b.parent === a.id ? 1 : 0);
      // Docker's: with a reference filter, an image shows only the names that match it
      const patterns = filters.get("reference") ?? [];
      const named = (i: Image): Image => (patterns.length ? { ...i, references: matchingReferences(i, patterns) } : i);
      // Docker's: the size of an image's layers other images have too, when asked (from API 1.42),
      // counted over every image, listed or not; and from API 1.51 the containers made from each
      const shared = compareApiVersions(version, "1.42") >= 0 && queryBool(query, "shared-size") ? sharedSizes(all, store) : undefined;
      const counts = compareApiVersions(version, "1.51") >= 0 ? (deps.containerCounts?.() ?? new Map<string, number>()) : undefined;
      return shown
        .filter(keep)
        .sort(newest)
        .map((i) => olderNames({
          ...summary(named(i), version, store),
          ...(shared ? { SharedSize: shared(i) } : {}),
          ...(counts ? { Containers: counts.get(i.id) ?? 0 } : {}),
        }, version));
    });

    app.get("/images/get", async (request, reply) => {
      const names = queryList(request.query as Query, "names");
      return sendSave(reply, names);
    });

    // `quiet` would hide progress only, and a load sends none; the "Loaded image" lines always come.
    // A load that fails answers 200 all the same, with the error as the stream's last line, as
    // Docker's daemon does (docker-py raises its ImageLoadError from that line).
    app.post("/images/load", async (request, reply) => {
      const lines: unknown[] = [];
      const { loadImages } = await loading();
      // Through a pipe that a failure only unplugs: the archive's readers destroy their input
      // when they fail, and the request's socket would go with it.
      const body = new PassThrough();
      request.raw.pipe(body);
      try {
        await loadImages(store, body, {
          disablePigz: deps.disablePigz(),
          onLoaded: (image, tags) => {
            if (tags.length === 0) lines.push({ stream: `Loaded image ID: ${image.id}\n` });
            for (const tag of tags) lines.push({ stream: `Loaded image: ${familiarName(formatReference(parseReference(tag)))}\n` });
            deps.hooks.event.call(imageEvent(image, "load", image.id));
          },
        });
      } catch (err) {
        // The rest of a refused body is read and dropped: a client still sending it gets the
        // 400, not a broken pipe (the server's request timeout bounds how long).
        request.raw.unpipe(body);
        request.raw.resume();
        const message = toEngineError(err).message;
        return jsonLines(reply, [...lines, { errorDetail: { message }, error: message }]);
      }
      return jsonLines(reply, lines);
    });

    app.post("/images/create", async (request, reply) => {
      const query = request.query as Query;
      const fromSrc = queryString(query, "fromSrc");
      const fromImage = queryString(query, "fromImage");
      // read first, for a pull and an import alike, from API 1.32 (Docker's route); none is the host's
      const platformText = compareApiVersions(requestedApiVersion(request.raw), "1.32") >= 0 ? queryString(query, "platform") : undefined;
      const platform = parsePlatform(platformText);
      if (fromSrc === undefined && fromImage) return pull(request, reply, fromImage, platform);
      if (fromSrc === undefined) throw errors.apiInvalidBody("fromSrc or fromImage is required");
      const repo = queryString(query, "repo");
      const target = repoTagReference(repo, queryString(query, "tag"));
      const tags = target ? [target] : [];
      const { importImage, openImportSource, checkImportPlatform } = await importing();
      const source = await openImportSource(fromSrc, request.raw as Readable);
      try {
        checkImportPlatform(platform);
      } catch (err) {
        // the download goes unread; the client's body is read and dropped (it gets the 400, not a broken pipe)
        if (fromSrc === "-") source.resume();
        else source.destroy();
        throw err;
      }
      const image = await importImage(store, {
        source,
        from: fromSrc,
        tags,
        message: queryString(query, "message"),
        changes: queryList(query, "changes"),
        disablePigz: deps.disablePigz(),
        platform,
      });
      for (const t of tags) deps.hooks.event.call(imageTagEvent(image, t));
      deps.hooks.event.call(imageEvent(image, "import", image.id));
      return jsonLines(reply, [{ status: image.id }]);
    });

    app.post("/images/prune", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["dangling", "label", "until"]);
      const danglingOnly = filterBool(filters, "dangling") ?? true;
      // `dangling` says which images a prune takes (with `false`: unnamed ones too), not a match
      const keep = imageFilter(new Map([...filters].filter(([key]) => key !== "dangling")), store);
      const deleted: unknown[] = [];
      let reclaimed = 0;
      for (const image of store.list()) {
        // (gone already: removed as the parent of an image removed before it, Docker's prune of parents)
        if (!store.byId(image.id)) continue;
        if (danglingOnly && image.references.length > 0) continue;
        // a parent of committed images is not dangling, and stays while they do
        if (!keep(image) || deps.inUse?.(image.id) || store.children(image.id).length > 0) continue;
        // gone meanwhile: removed above as the parent of an image pruned before it, or by another request
        if (!store.byId(image.id)) continue;
        // the parents the removal takes along are checked for containers too: one a container's
        // layer rests on stays (its layers would go from under the container)
        const ancestors = store.ancestors(image);
        const entries = await store.delete(image.id, { force: true, noprune: false });
        for (const e of imageDeleteEvents(image, entries, ancestors)) deps.hooks.event.call(e);
        deleted.push(...entries);
        reclaimed += image.size;
      }
      deps.hooks.event.call(makeEvent("image", "prune", "", { reclaimed: String(reclaimed) }));
      return { ImagesDeleted: deleted.length ? deleted : null, SpaceReclaimed: reclaimed };
    });

    app.get("/images/*", async (request, reply) => {
      const { name, action } = nameAndAction(request, ["json", "history", "get"]);
      if (action === "get") return sendSave(reply, [name]);
      const image = store.resolve(name);
      const version = requestedApiVersion(request.raw);
      // (a platform is read from API 1.48 for a history, 1.49 for an inspect, as Docker's router reads it)
      const platform = queryString(request.query as Query, "platform");
      if (action === "json") {
        if (compareApiVersions(version, "1.49") >= 0) checkImagePlatform(name, image.config, platform);
        return inspect(image, store, await graphDriver(image, deps.driver), version, isComposeV1(request.headers["user-agent"]));
      }
      if (action === "history") {
        if (compareApiVersions(version, "1.48") >= 0) checkImagePlatform(name, image.config, platform);
        return history(image, store);
      }
      throw errors.apiPageNotFound();
    });

    app.post("/images/*", async (request, reply) => {
      const { name, action } = nameAndAction(request, ["tag", "push"]);
      if (action === "push") return push(request, reply, name);
      if (action !== "tag") throw errors.apiPageNotFound();
      const query = request.query as Query;
      const repo = queryString(query, "repo");
      // Docker 28's router reads no `repo` as no reference and wraps the nil error it has then as
      // a refusal, which is nil too: it answers 200 with nothing tagged, before the image is looked
      // up, at every API version (dockerd 20.10 looked the image up and answered 500)
      if (!repo) return reply.code(200).send();
      const target = repoTagReference(repo, queryString(query, "tag"))!;
      // `sha256:x` would read as a digest (an ID) wherever the name is used: Docker refuses it before looking the image up
      if (familiarName(repositoryOf(parseReference(target))) === "sha256") throw errors.imageTagAmbiguous();
      await store.tag(name, target);
      deps.hooks.event.call(imageTagEvent(store.resolve(target), target));
      return reply.code(201).send();
    });

    app.delete("/images/*", async (request) => {
      const { name } = nameAndAction(request, []);
      if (name.trim() === "") throw errors.imageNameBlank();
      const query = request.query as Query;
      // from API 1.50 a remove may name the platform of the image it means (below, not read)
      const platform = compareApiVersions(requestedApiVersion(request.raw), "1.50") >= 0 ? decodeRemovePlatforms(queryList(query, "platforms")) : undefined;
      const image = store.resolve(name);
      checkCreatePlatform(name, image.config, platform);
      const ancestors = store.ancestors(image);
      const entries = await store.delete(name, { force: queryBool(query, "force"), noprune: queryBool(query, "noprune") });
      for (const e of imageDeleteEvents(image, entries, ancestors)) deps.hooks.event.call(e);
      return entries;
    });
  };

  /** `fromImage` (short or full, with a tag or digest) and `tag` (a tag or a digest). */
  async function pull(request: FastifyRequest, reply: FastifyReply, fromImage: string, platform: Platform) {
    const query = request.query as Query;
    const tag = queryString(query, "tag");
    refuseIdAsName(fromImage);
    let ref = parseReference(fromImage, null);
    if (tag && !ref.tag && !ref.digest) ref = tag.startsWith("sha256:") ? parseReference(`${fromImage}@${tag}`) : parseReference(`${fromImage}:${checkTag(tag)}`);
    const credentials = decodeAuthHeader(request.headers["x-registry-auth"]);
    const { pullImage } = await pulling();
    const limits = deps.limits();
    return progressStream(reply, async (w) => {
      await pullImage(
        {
          store,
          registry: deps.registry,
          limits: () => ({ downloads: limits.downloads, attempts: limits.attempts, disablePigz: deps.disablePigz() }),
          received: (bytes) => deps.hooks.receivedImageBytes.call(bytes),
        },
        { reference: ref, allTags: !ref.tag && !ref.digest, credentials, platform, ...w },
      );
      deps.hooks.event.call(imageTransferEvent(store, "pull", formatReference(ref)));
    });
  }

  async function push(request: FastifyRequest, reply: FastifyReply, name: string) {
    const query = request.query as Query;
    const tag = queryString(query, "tag");
    let ref = parseReference(name, null);
    if (ref.digest) throw errors.apiInvalidBody("cannot push a digest reference");
    if (tag && !ref.tag) ref = parseReference(`${name}:${checkTag(tag)}`);
    const credentials = decodeAuthHeader(request.headers["x-registry-auth"]);
    const { pushImage } = await pushing();
    const uploads = deps.limits().uploads;
    return progressStream(reply, async (w) => {
      await pushImage({ store, registry: deps.registry, uploads: () => uploads }, { reference: ref, credentials, signal: w.signal, emit: w.emit, disablePigz: deps.disablePigz() });
      deps.hooks.event.call(imageTransferEvent(store, "push", formatReference(ref)));
    });
  }

  async function sendSave(reply: FastifyReply, names: readonly string[]) {
    const { saveImages } = await saving();
    // As Docker's exporter: one item per image, with each tag a name gave it once. A name with a
    // tag saves that tag; a repository name alone all of its tags, whichever images they name
    // (else it is read as an ID); a digest or an ID no tag.
    const byId = new Map<string, SaveItem>();
    const add = (image: SaveItem["image"], ref?: string) => {
      let item = byId.get(image.id);
      if (!item) byId.set(image.id, (item = { image, refs: [] }));
      if (ref !== undefined && !ref.includes("@") && !item.refs.includes(ref)) item.refs.push(ref);
    };
    for (const name of names) {
      let nameOnly;
      let named = false;
      try {
        const ref = parseReference(name, null);
        nameOnly = !ref.tag && !ref.digest ? repositoryOf(ref) : undefined;
        named = !!(ref.tag || ref.digest);
      } catch {
        nameOnly = undefined; // not a name: an ID, or refused by lookup below
      }
      const tagged = nameOnly === undefined ? [] : store.list().flatMap((image) => image.references.filter((r) => r.startsWith(`${nameOnly}:`)).map((r) => ({ image, r })));
      if (tagged.length > 0) {
        for (const { image, r } of tagged) add(image, r);
        continue;
      }
      try {
        const { image, reference } = store.lookup(name);
        add(image, reference);
      } catch (err) {
        // a repository without tags, nor an image's ID: named as it was given; a tag or a digest
        // it lacks: Docker's reference store's words
        if (err instanceof EngineError && err.statusCode === 404) {
          if (nameOnly !== undefined) throw errors.imageNotFound(name);
          if (named) throw errors.imageTagNotFound();
        }
        throw err;
      }
    }
    const items = [...byId.values()];
    // a layer that cannot be exported is an error before the archive starts, not a cut archive
    for (const { image } of items) {
      for (const chainId of image.chain) {
        const layer = store.layers.get(chainId);
        if (layer) store.layers.assertExportable(layer);
      }
    }
    // one event per image, however many of its names were given (Docker's exporter keys them by ID)
    for (const image of new Map(items.map(({ image }) => [image.id, image])).values()) deps.hooks.event.call(imageEvent(image, "save", image.id));
    return reply.type("application/x-tar").send(saveImages(store, items, { disablePigz: deps.disablePigz() }));
  }
}
