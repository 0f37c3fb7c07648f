/**
 * The OCI runtime as `docker version` lists it among the server's components, beside the
 * engine: its binary's name, the version and commit its `--version` prints (`runc version
 * 1.1.5`, `commit: ...`). Asked once per binary; a runtime that cannot say is left out.
 */
import { basename } from "node:path";
import { execFileAsync as run } from "../core/exec-file.js";
import type { VersionComponent } from "../core/system-info.js";

const asked = new Map<string, Promise<VersionComponent | undefined>>();

export function runtimeComponent(path: string): Promise<VersionComponent | undefined> {
  let known = asked.get(path);
  if (!known) {
    known = run(path, ["--version"], { timeout: 10_000 }).then(
      ({ stdout }) => {
        const version = /version\s+(\S+)/.exec(stdout)?.[1];
        const commit = /^commit:\s*(\S+)/m.exec(stdout)?.[1];
        return version ? { Name: basename(path), Version: version, ...(commit ? { Details: { GitCommit: commit } } : {}) } : undefined;
      },
      () => undefined,
    );
    asked.set(path, known);
  }
  return known;
}
