/**
 * The daemon's legacy links (`--link db:alias`), as Docker's daemon keeps them: resolved to
 * containers at create and kept in the parent's record (`Links`, by the child's id), shown by
 * inspect as `/db:/web/alias` and in the list as one more name of the child; at the parent's
 * start, checked (the children run, on the default network), then turned into environment
 * variables and `/etc/hosts` lines (the text: core/containers/links.ts). They are a feature of
 * the default bridge network only: a parent elsewhere gets nothing from them, and on a
 * user-defined network the request's links are the endpoint's (`EndpointsConfig.Links`, names
 * its DNS resolves for it alone) and `HostConfig.Links` is kept as given but unused, as Docker does.
 *
 * What happens around them, as in Docker: a child that starts again gets its new address written
 * into its running parents' hosts files; renaming a parent moves its links' names, renaming a
 * child shows in its parents' inspect; removing a child leaves its parents' links, which then
 * refuse their start, until the daemon restarts and resolves them again by name; `DELETE
 * /containers/{parent}/{alias}?link=1` removes one link (and its hosts line from a running parent,
 * and, with `--icc=false`, the rules that opened the bridge between them).
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { Logger } from "pino";
import type { HostConfig } from "../../core/containers/container-config.js";
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import { aliasOf, linkEnv, linkHostNames, linkName, parseLink, withLinkAddress, withoutLinkLines, type ContainerLink } from "../../core/containers/links.js";
import { EngineError, errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { networkFilePaths } from "../network/container-files.js";
import { DEFAULT_NETWORK } from "../network/network-manager.js";

export interface LinksDeps {
  containers: ContainerStore;
  hooks: EngineHooks;
  log: Logger;
  /** A link removed while its parent runs: the network closes what the link opened (`--icc=false`). */
  unlinked?: (parent: ContainerRecord, child: ContainerRecord) => Promise<void>;
}

/** A link resolved at create, before the parent has its name. */
export interface LinkTarget {
  child: ContainerRecord;
  alias: string;
}

const HOST_CONFLICT = "conflicting options: host type networking can't be used with links. This would result in undefined behavior";
const CONTAINER_CONFLICT = "conflicting options: container type network can't be used with links. This would result in undefined behavior";
/** How many `container:` hops a child's network mode is followed (a loop cannot be made, but the walk stays bounded). */
const MAX_SHARED_HOPS = 16;

/** Docker's user-defined modes: a network's name, neither the default, host, none nor another container's. */
function userDefined(mode: string): boolean {
  return !["", "default", DEFAULT_NETWORK, "host", "none"].includes(mode) && !mode.startsWith("container:");
}

export class ContainerLinks {
  constructor(private readonly deps: LinksDeps) {
    // a child started again (by a user or its restart policy) has a new address for its parents
    deps.hooks.event.tap("links", (e) => {
      if (e.Type === "container" && e.Action === "start") this.childStarted(e.Actor.ID);
    });
  }

  // --- create ------------------------------------------------------------------------------------

  /**
   * The children `HostConfig.Links` names, checked as Docker checks them at create: no links
   * with the host's or another container's network, entries of the right form, children that
   * exist (one sharing another's network stands for that one), none on the host's network.
   * Nothing on a user-defined network, where the links are the endpoint's.
   */
  resolve(hc: HostConfig, mode: string): LinkTarget[] {
    const entries = hc.Links ?? [];
    if (entries.length === 0) return [];
    if (mode === "host") throw errors.containerLinkInvalid(HOST_CONFLICT);
    if (mode.startsWith("container:")) throw errors.containerLinkInvalid(CONTAINER_CONFLICT);
    if (userDefined(mode)) return [];
    return entries.map((entry) => {
      const { name, alias } = parseLink(entry);
      let child = this.lookup(name);
      for (let hop = 0; hop < MAX_SHARED_HOPS && child.HostConfig.NetworkMode?.startsWith("container:"); hop++) {
        child = this.lookup(child.HostConfig.NetworkMode.slice("container:".length));
      }
      if (child.HostConfig.NetworkMode === "host") throw errors.containerLinkInvalid(HOST_CONFLICT);
      return { child, alias };
    });
  }

  /**
   * The links a new container named `parentName` keeps. A name already taken (the parent's own,
   * from an empty alias; an earlier link's) leaves the link out, as Docker's name reservation does.
   */
  record(parentName: string, targets: readonly LinkTarget[]): ContainerLink[] | undefined {
    const out: ContainerLink[] = [];
    for (const { child, alias } of targets) {
      const name = linkName(parentName, alias);
      if (!name.startsWith(`${parentName}/`) || out.some((l) => l.Name === name)) continue;
      out.push({ Name: name, ChildId: child.Id, ChildName: child.Name });
    }
    return out.length ? out : undefined;
  }

  /** A 400 naming the link, as Docker's create answers, when `name` is no container. */
  private lookup(name: string): ContainerRecord {
    if (name === "") throw errors.containerLinkTargetNotFound(name, 'invalid name or ID supplied: ""');
    try {
      return this.deps.containers.get(name);
    } catch (err) {
      if (err instanceof EngineError && err.statusCode < 500) throw errors.containerLinkTargetNotFound(name, err.message);
      throw err;
    }
  }

  // --- what clients see ----------------------------------------------------------------------------

  /** Inspect's `HostConfig.Links`: `/db:/web/alias` per link, or null. */
  inspectLinks(c: ContainerRecord): string[] | null {
    return c.Links?.length ? c.Links.map((l) => `${this.childName(l)}:${l.Name}`) : null;
  }

  /** The link names each container is known by besides its own (the list's `Names`), by id. */
  linkNames(): Map<string, string[]> {
    const names = new Map<string, string[]>();
    for (const parent of this.deps.containers.list()) {
      for (const l of parent.Links ?? []) {
        if (this.deps.containers.has(l.ChildId)) names.set(l.ChildId, [...(names.get(l.ChildId) ?? []), l.Name]);
      }
    }
    return names;
  }

  private childName(l: ContainerLink): string {
    return this.deps.containers.find(l.ChildId)?.Name ?? l.ChildName;
  }

  // --- the parent's start --------------------------------------------------------------------------

  /** Whether the container is on the default network, the only one where links mean something. */
  private onDefault(c: ContainerRecord): boolean {
    if (c.Networks) return DEFAULT_NETWORK in c.Networks;
    return ["", "default", DEFAULT_NETWORK].includes(c.HostConfig.NetworkMode ?? "");
  }

  private children(c: ContainerRecord): { link: ContainerLink; child?: ContainerRecord }[] {
    if (!c.Links?.length || !this.onDefault(c)) return [];
    return c.Links.map((link) => ({ link, child: this.deps.containers.find(link.ChildId) }));
  }

  /**
   * Before the parent's network is made: its children are on the default network, then they
   * run (Docker's two checks, in its order). A child removed since counts as not running.
   */
  checkStart(c: ContainerRecord): void {
    const children = this.children(c);
    for (const { child } of children) if (child && !this.onDefault(child)) throw errors.containerLinkNotOnDefault(child.Name);
    for (const { link, child } of children) if (!child?.State.Running) throw errors.containerLinkNotRunning(child?.Name ?? link.ChildName, link.Name);
  }

  /** The link variables of the parent's process, link by link (checkStart has passed). */
  env(c: ContainerRecord): string[] {
    return this.children(c).flatMap(({ link, child }) =>
      child
        ? linkEnv({
            name: link.Name,
            childIp: addressesOf(child)[0] ?? "",
            childEnv: child.Config.Env ?? [],
            exposedPorts: Object.keys(child.Config.ExposedPorts ?? {}),
          })
        : [],
    );
  }

  /** The parent's `/etc/hosts` lines for its links: one per address of each running child. */
  hosts(c: ContainerRecord): (readonly [string, string])[] {
    return this.children(c).flatMap(({ link, child }) => {
      if (!child?.State.Running) return [];
      const names = linkHostNames(aliasOf(link.Name), child.Config.Hostname ?? "", child.Name);
      return addressesOf(child).map((address) => [address, names] as const);
    });
  }

  /**
   * The running containers linked with `c` on the default network: its children, and the
   * parents that link to it (whose filter rules `--icc=false` opens for the child's exposed ports).
   */
  peers(c: ContainerRecord): { children: ContainerRecord[]; parents: ContainerRecord[] } {
    const children = this.children(c).flatMap(({ child }) => (child?.State.Running ? [child] : []));
    const parents = this.onDefault(c)
      ? this.deps.containers.list().filter((p) => p.Id !== c.Id && p.State.Running && this.onDefault(p) && p.Links?.some((l) => l.ChildId === c.Id))
      : [];
    return { children, parents };
  }

  // --- changes -----------------------------------------------------------------------------------

  /**
   * `DELETE /containers/{name}?link=1`: the link `ref` names goes (a 404 when there is no such
   * name; a 409 for a container's own name); a running parent's hosts file loses its line.
   */
  async remove(ref: string): Promise<void> {
    this.deps.containers.get(ref);
    const name = ref.startsWith("/") ? ref : `/${ref}`;
    const cut = name.lastIndexOf("/");
    if (cut === 0) throw errors.containerLinkDefaultName();
    const parent = this.deps.containers.get(name.slice(0, cut));
    const link = parent.Links?.find((l) => l.Name === name);
    if (!link) throw errors.containerNotFound(ref);
    parent.Links = parent.Links!.filter((l) => l !== link);
    if (parent.Links.length === 0) delete parent.Links;
    const saved = this.deps.containers.save(parent);
    const child = this.deps.containers.find(link.ChildId);
    if (child && parent.State.Running) {
      const names = linkHostNames(aliasOf(link.Name), child.Config.Hostname ?? "", child.Name);
      this.editHosts(parent, (text) => withoutLinkLines(text, names));
      await this.deps.unlinked?.(parent, child).catch((err: Error) => this.deps.log.warn({ err, link: link.Name }, "cannot close the removed link's rules"));
    }
    await saved;
  }

  /**
   * After `c` was renamed from `oldName`: its links' names follow it; its parents show its new
   * name. Changed in memory at once; resolves once every changed record is on disk.
   */
  async renamed(c: ContainerRecord, oldName: string): Promise<void> {
    const saves: Promise<void>[] = [];
    if (c.Links?.length) {
      for (const l of c.Links) if (l.Name.startsWith(`${oldName}/`)) l.Name = c.Name + l.Name.slice(oldName.length);
      saves.push(this.deps.containers.save(c));
    }
    for (const parent of this.deps.containers.list()) {
      const own = parent.Links?.filter((l) => l.ChildId === c.Id) ?? [];
      for (const l of own) l.ChildName = c.Name;
      if (own.length) saves.push(this.deps.containers.save(parent));
    }
    await Promise.all(saves);
  }

  /**
   * At daemon start: every parent's links resolved again by the names its `HostConfig.Links`
   * gives, in order, as Docker's restore registers them: a name now of another container links
   * to that one, a child renamed or removed meanwhile is linked no more, a link removed with
   * `rm --link` is back; the first entry that cannot be resolved ends the parent's links (the
   * log says why), as Docker's registerLinks stops there.
   */
  async restore(): Promise<void> {
    const saves: Promise<void>[] = [];
    for (const parent of this.deps.containers.list()) {
      const entries = parent.HostConfig.Links ?? [];
      if (entries.length === 0 && !parent.Links?.length) continue;
      const targets: LinkTarget[] = [];
      for (const entry of entries) {
        try {
          targets.push(...this.resolve({ Links: [entry] }, parent.HostConfig.NetworkMode ?? ""));
        } catch (err) {
          if (!(err instanceof EngineError)) throw err;
          this.deps.log.warn({ container: parent.Id, link: entry }, `failed to register link for container: ${err.message}`);
          break;
        }
      }
      const links = this.record(parent.Name, targets);
      if (JSON.stringify(links ?? []) === JSON.stringify(parent.Links ?? [])) continue;
      if (links) parent.Links = links;
      else delete parent.Links;
      saves.push(this.deps.containers.save(parent));
    }
    await Promise.all(saves);
  }

  /** A child started: its running parents' hosts files get its new address, line by line. */
  private childStarted(childId: string): void {
    const child = this.deps.containers.find(childId);
    const address = child && this.onDefault(child) ? addressesOf(child).find((a) => !a.includes(":")) : undefined;
    if (!address) return;
    for (const parent of this.deps.containers.list()) {
      if (!parent.State.Running || !this.onDefault(parent)) continue;
      for (const l of parent.Links ?? []) if (l.ChildId === childId) this.editHosts(parent, (text) => withLinkAddress(text, aliasOf(l.Name), address));
    }
  }

  /** Changes a running container's hosts file in place (its mount sees the same file). */
  private editHosts(c: ContainerRecord, edit: (text: string) => string): void {
    const path = networkFilePaths(this.deps.containers.dir(c.Id)).hosts;
    try {
      writeFileSync(path, edit(readFileSync(path, "utf8")));
    } catch (err) {
      this.deps.log.warn({ err, container: c.Id }, "cannot update the hosts file of a linked container");
    }
  }
}

/** A running container's addresses on the default network, IPv4 first. */
function addressesOf(c: ContainerRecord): string[] {
  const ep = c.State.Running ? c.Endpoints?.find((e) => e.networkName === DEFAULT_NETWORK) : undefined;
  return [ep?.ipv4, ep?.ipv6].filter((a): a is string => !!a).map((a) => a.split("/")[0]!);
}
