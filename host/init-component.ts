/**
 * The init binary `--init` runs (tini, runtime-ocirun/init.ts), as Docker reports its
 * docker-init: `/info`'s `InitBinary` is the one configured (`--init-path`), else the name found
 * on the PATH (`docker-init` where Docker's package put it, else Debian's `tini-static` or
 * `tini`), else `docker-init`, the name Docker would look for; `InitCommit.ID` is the git commit
 * its `--version` prints (`tini version 0.18.0 - git.fec3683`), "" when it prints none (Debian's
 * tini says only `tini version 0.19.0`), and "N/A" when there is no binary or its answer is not
 * tini's. `/version` lists it as a component, its version and commit. Asked once per binary.
 */
import { basename } from "node:path";
import { execFileAsync as run } from "../core/exec-file.js";
import type { VersionComponent } from "../core/system-info.js";
import { findInit } from "../plugins/runtime-ocirun/init.js";

export interface InitReport {
  /** `InitBinary`. */
  binary: string;
  /** `InitCommit.ID`. */
  commit: string;
  /** Its `/version` component, when it said its version. */
  component?: VersionComponent;
}

const asked = new Map<string, Promise<{ version: string; commit: string } | undefined>>();

export async function initReport(initPath: string): Promise<InitReport> {
  const found = findInit(initPath);
  const binary = initPath || (found ? basename(found) : "docker-init");
  if (!found) return { binary, commit: "N/A" };
  let known = asked.get(found);
  if (!known) {
    known = run(found, ["--version"], { timeout: 10_000 }).then(
      ({ stdout }) => parseInitVersion(stdout),
      () => undefined,
    );
    asked.set(found, known);
  }
  const said = await known;
  if (!said) return { binary, commit: "N/A" };
  return { binary, commit: said.commit, component: { Name: basename(found), Version: said.version, Details: { GitCommit: said.commit } } };
}

/** `tini version 0.18.0 - git.fec3683` -> 0.18.0 and fec3683; undefined when neither is there. */
export function parseInitVersion(text: string): { version: string; commit: string } | undefined {
  const [head, tail] = text.split(" - ", 2);
  const git = /^git\.([^.\s]+)$/.exec(tail?.trim() ?? "");
  const version = /^tini version (.+)$/.exec(head.trim())?.[1] ?? "";
  const commit = git?.[1] ?? "";
  return version || commit ? { version, commit } : undefined;
}
