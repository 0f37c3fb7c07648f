/**
 * `--cidfile` as the Docker CLI keeps it: a file that exists already is refused (another
 * container may own it), the file is made before the create and holds the new id (no newline)
 * once there is one; a create that fails takes the empty file away again.
 */
import { closeSync, existsSync, openSync, rmSync, writeSync } from "node:fs";
import { openError } from "./env-file.js";

export class CidFile {
  private written = false;

  private constructor(
    private readonly path: string,
    private readonly fd: number | undefined,
  ) {}

  /** Nothing to write for "" (no `--cidfile`). */
  static open(path: string): CidFile {
    if (path === "") return new CidFile(path, undefined);
    if (existsSync(path)) throw new Error(`container ID file found, make sure the other container isn't running or delete ${path}`);
    try {
      return new CidFile(path, openSync(path, "w"));
    } catch (e) {
      throw new Error(`failed to create the container ID file: ${openError(path, e as NodeJS.ErrnoException).message}`);
    }
  }

  write(id: string): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, id);
    this.written = true;
  }

  /** Closes the file; removes it when no id was written. */
  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    if (!this.written) rmSync(this.path, { force: true });
  }
}
