/**
 * A pod's namespaces, pinned by bind mounts instead of held by an infra ("pause") process:
 * util-linux `unshare --net=FILE --ipc=FILE --uts=FILE` makes new namespaces and bind-mounts
 * each onto its file, where they live on with no process in them, as CRI-O's pinns keeps them.
 * The sandbox's containers join them by path (the OCI spec's `linux.namespaces[].path`). The
 * UTS namespace gets the pod's hostname as it is made (the command run inside is `hostname`).
 *
 * Why not an infra container: nothing to pull or run per pod (the kubelet's sandbox image is
 * accepted and unused), nothing to supervise, and a pinned namespace cannot die. What it
 * cannot give is a PID namespace for the whole pod: a PID namespace lives only as long as its
 * first process, and nothing can join it after that one is gone. A pod that shares one among
 * its containers (pid POD) therefore gets a tiny init, catatonit, run under the CRI supervisor
 * as PID 1 of that namespace (pod-init.ts); the other namespaces stay pinned here.
 *
 * Files: `<dir>/net`, `<dir>/ipc`, `<dir>/uts`, each present only for a namespace the pod owns
 * (a pod on the node's network or IPC uses the node's).
 */
import { mkdir, rm, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execFileAsync as run } from "../../../core/exec-file.js";
import { unmountAll } from "../../storage/mount-specs.js";

export type PinnedKind = "net" | "ipc" | "uts";

export interface PinnedNamespaces {
  dir: string;
  /** The files of the namespaces this pod owns, by kind. */
  paths: Partial<Record<PinnedKind, string>>;
}

/** Makes the pod's own namespaces (`kinds`), with `hostname` set in its UTS namespace; undoes itself on failure. */
export async function pinNamespaces(dir: string, kinds: readonly PinnedKind[], hostname: string): Promise<PinnedNamespaces> {
  await mkdir(dir, { recursive: true, mode: 0o711 });
  const paths: Partial<Record<PinnedKind, string>> = {};
  for (const kind of kinds) {
    paths[kind] = join(dir, kind);
    await writeFile(paths[kind], "", { mode: 0o444 });
  }
  const pinned = { dir, paths };
  if (kinds.length === 0) return pinned;
  try {
    const flags = kinds.map((k) => `--${k}=${paths[k]}`);
    // with a UTS namespace of its own the pod's hostname is set inside it; else nothing to run
    const inside = paths.uts ? ["hostname", hostname] : ["true"];
    await run("unshare", [...flags, "--", ...inside], { timeout: 30_000 });
  } catch (err) {
    await unpinNamespaces(pinned).catch(() => {});
    throw new Error(`cannot make the pod's namespaces: ${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`);
  }
  return pinned;
}

/** Unmounts one pinned namespace and removes its file (safe to repeat, and after a crash). */
export async function unpinNamespace(pinned: PinnedNamespaces, kind: PinnedKind): Promise<void> {
  const path = pinned.paths[kind];
  if (!path) return;
  await unmountAll(path);
  await rm(path, { force: true });
}

/** Unpins every namespace and removes the folder (safe to repeat). */
export async function unpinNamespaces(pinned: PinnedNamespaces): Promise<void> {
  for (const kind of Object.keys(pinned.paths) as PinnedKind[]) await unpinNamespace(pinned, kind);
  await rmdir(pinned.dir).catch(() => {});
}

/** Runs a command inside the pod's pinned namespaces (`nsenter`), e.g. sysctl -w. */
export async function runInNamespaces(pinned: PinnedNamespaces, kinds: readonly PinnedKind[], command: string[]): Promise<string> {
  const flags = kinds.filter((k) => pinned.paths[k]).map((k) => `--${k}=${pinned.paths[k]}`);
  const { stdout } = await run("nsenter", [...flags, "--", ...command], { timeout: 30_000 });
  return stdout;
}
