/**
 * Sandboxes: a container's network namespace, bound to `<exec-root>/netns/<container id>` with
 * util-linux `unshare --net=FILE`, made before the container's process exists (the OCI spec
 * names the file) and removed after it is gone. The binding is a mount: removing it is an
 * unmount, and a leftover after a crash is found by its file.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

export class Sandboxes {
  readonly dir: string;

  constructor(execRoot: string) {
    this.dir = join(execRoot, "netns");
  }

  path(containerId: string): string {
    return join(this.dir, containerId);
  }

  exists(containerId: string): boolean {
    return existsSync(this.path(containerId));
  }

  /** A fresh namespace with its loopback up. */
  async create(containerId: string): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.path(containerId);
    if (existsSync(file)) await this.remove(containerId);
    writeFileSync(file, "", { mode: 0o600 });
    try {
      await exec("unshare", [`--net=${file}`, "--", "ip", "link", "set", "lo", "up"], { timeout: 30_000 });
    } catch (err) {
      await this.remove(containerId);
      throw new Error(`cannot make the network namespace of container ${containerId.slice(0, 12)}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
    }
    return file;
  }

  /** Unbinds and deletes the namespace file; nothing there is fine. */
  async remove(containerId: string): Promise<void> {
    const file = this.path(containerId);
    if (!existsSync(file)) return;
    try {
      await exec("umount", ["--lazy", file], { timeout: 30_000 });
    } catch (err) {
      // not mounted (a create that failed half way) is fine; anything else leaves the file for a retry
      if (!/not mounted|no mount point/i.test((err as { stderr?: string }).stderr ?? "")) throw err;
    }
    rmSync(file, { force: true });
  }

  /** The container ids that have a sandbox file. */
  list(): string[] {
    try {
      return readdirSync(this.dir);
    } catch {
      return [];
    }
  }
}
