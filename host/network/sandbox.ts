/**
 * Sandboxes: a container's network namespace, bound to `<exec-root>/netns/<container id>`, made
 * before the container's process exists (the OCI spec names the file) and removed after it is
 * gone. The binding is a mount: removing it is an unmount, and a leftover after a crash is found
 * by its file.
 *
 * A container in a user namespace (`--userns-remap`) must have a network namespace its user
 * namespace owns, or the kernel refuses it a sysfs mount. So for one, both are made together
 * (userns-netns.ts) and the user namespace is bound beside, at `<exec-root>/userns/<id>`: the
 * runtime joins both. Otherwise util-linux `unshare --net=FILE` makes it.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileAsync as exec } from "../../core/exec-file.js";
import { mount, unmount } from "../../core/fs/mount.js";
import type { IdMap } from "../../core/userns/id-map.js";
import { makeUsernsNetns } from "./userns-netns.js";

export class Sandboxes {
  readonly dir: string;
  readonly usernsDir: string;
  private hostLoopback?: Promise<void>;

  constructor(execRoot: string) {
    this.dir = join(execRoot, "netns");
    this.usernsDir = join(execRoot, "userns");
  }

  path(containerId: string): string {
    return join(this.dir, containerId);
  }

  /** The bound user namespace of a sandbox made with an id map. */
  usernsPath(containerId: string): string {
    return join(this.usernsDir, containerId);
  }

  exists(containerId: string): boolean {
    return existsSync(this.path(containerId));
  }

  hasUserns(containerId: string): boolean {
    return existsSync(this.usernsPath(containerId));
  }

  /** A fresh namespace with its loopback up; with `idMap`, owned by a new user namespace with that map. */
  async create(containerId: string, idMap?: IdMap): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.path(containerId);
    if (existsSync(file) || this.hasUserns(containerId)) await this.remove(containerId);
    writeFileSync(file, "", { mode: 0o600 });
    try {
      if (idMap) {
        mkdirSync(this.usernsDir, { recursive: true, mode: 0o700 });
        const userFile = this.usernsPath(containerId);
        writeFileSync(userFile, "", { mode: 0o600 });
        await makeUsernsNetns(userFile, file, idMap);
        await exec("nsenter", [`--net=${file}`, "--", "ip", "link", "set", "lo", "up"], { timeout: 30_000 });
      } else {
        await exec("unshare", [`--net=${file}`, "--", "ip", "link", "set", "lo", "up"], { timeout: 30_000 });
      }
    } catch (err) {
      await this.remove(containerId);
      throw new Error(`cannot make the network namespace of container ${containerId.slice(0, 12)}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
    }
    return file;
  }

  /**
   * The namespace a running container's process made itself (NetworkMode none: the runtime made
   * it), bound as its sandbox, for a network connected to it now: Docker's none containers have a
   * sandbox of their own that a connect joins. Removed at the container's end as any sandbox is.
   */
  async adopt(containerId: string, pid: number): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.path(containerId);
    if (existsSync(file)) await this.remove(containerId);
    writeFileSync(file, "", { mode: 0o600 });
    try {
      await mount(`/proc/${pid}/ns/net`, file, "bind");
    } catch (err) {
      rmSync(file, { force: true });
      throw new Error(`cannot take the network namespace of container ${containerId.slice(0, 12)} as its sandbox: ${(err as Error).message}`);
    }
    return file;
  }

  /**
   * The daemon's own namespace's loopback up, once, before its first host-network container
   * starts: Docker's daemon does the same when it makes the sandbox host-network containers share
   * (libnetwork's NewSandbox brings every sandbox's loopback up, the host's one too). Already up on
   * an ordinary host; in a namespace made for the daemon (rootless, tests) it is down until then,
   * and a port published on 127.0.0.1 or a host-network service on it could not be reached.
   */
  hostLoopbackUp(): Promise<void> {
    this.hostLoopback ??= exec("ip", ["link", "set", "lo", "up"], { timeout: 30_000 }).then(
      () => undefined,
      (err: unknown) => {
        this.hostLoopback = undefined; // tried again by the next one
        throw new Error(`cannot bring up the daemon's loopback for a host-network container: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
      },
    );
    return this.hostLoopback;
  }

  /** Unbinds and deletes the namespace files; nothing there is fine. */
  async remove(containerId: string): Promise<void> {
    await unbind(this.path(containerId));
    await unbind(this.usernsPath(containerId));
  }

  /** The container ids that have a sandbox file. */
  list(): string[] {
    const ids = new Set<string>();
    for (const dir of [this.dir, this.usernsDir]) {
      try {
        for (const id of readdirSync(dir)) ids.add(id);
      } catch {
        // no such folder yet
      }
    }
    return [...ids];
  }
}

/** Unmounts a namespace binding and deletes its file. */
async function unbind(file: string): Promise<void> {
  if (!existsSync(file)) return;
  // not mounted (a create that failed half way) is fine; anything else throws and leaves the file for a retry
  await unmount(file, { lazy: true });
  rmSync(file, { force: true });
}
