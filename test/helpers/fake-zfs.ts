/**
 * A fake ZFS for the zfs driver's tests (test/fixtures/fake-zfs.ts): a state folder with its
 * pools, and executable `zfs` and `zpool` launchers in it that run the fake under this Node.js
 * with FAKE_ZFS_ROOT set. The driver is pointed at the launchers through its test hooks (never
 * through PATH). Mount specifications of type `zfs` are mounted by bind-mounting the dataset's
 * folder, refusing what mount.zfs refuses (a dataset that is not there, or not `legacy`).
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { MountSpec } from "../../core/contracts/storage.js";
import { FakeZfsModel } from "../fixtures/fake-zfs-model.js";
import { makeTempDir, runCommand, type RunResult } from "./engined.js";

const run = promisify(execFile);
const FAKE = fileURLToPath(new URL("../fixtures/fake-zfs.js", import.meta.url));

export interface FakeZfs {
  root: string;
  model: FakeZfsModel;
  /** The launchers, for the driver's `zfsCommand` and `zpoolCommand` hooks. */
  zfsPath: string;
  zpoolPath: string;
  /** Runs the fake zfs as a user would. */
  zfs(args: string[]): Promise<RunResult>;
  /** Mounts one zfs specification at `target` (the driver's `mount` hook). */
  mount(spec: MountSpec, target: string): Promise<void>;
  /** Mounts specifications at `target` (the conformance suite's mount function). */
  mountAll(specs: readonly MountSpec[], target: string): Promise<void>;
  /** The argument lists of every call so far, `zfs`/`zpool` first. */
  calls(): string[][];
}

function launcher(root: string, command: "zfs" | "zpool"): string {
  const path = join(root, command);
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(path, `#!/bin/sh\nFAKE_ZFS_ROOT=${quote(root)} exec ${quote(process.execPath)} ${quote(FAKE)} ${command} "$@"\n`, { mode: 0o755 });
  return path;
}

/** A fake ZFS with these pools, in a temporary folder the root hook removes. */
export function startFakeZfs(pools: string[] = ["tank"]): FakeZfs {
  const root = makeTempDir("engine-fake-zfs-");
  const model = FakeZfsModel.init(root, pools);
  const zfsPath = launcher(root, "zfs");
  const zpoolPath = launcher(root, "zpool");
  const mount = async (spec: MountSpec, target: string) => {
    if (spec.type !== "zfs") throw new Error(`the fake zfs mounts zfs specifications only, not ${spec.type}`);
    const ds = model.load().datasets[spec.source];
    if (!ds || ds.type !== "filesystem") throw new Error(`filesystem '${spec.source}' cannot be mounted, unable to open the dataset`);
    if (ds.props.mountpoint !== "legacy") {
      throw new Error(`filesystem '${spec.source}' cannot be mounted using 'mount'.\nUse 'zfs set mountpoint=legacy' or 'zfs mount ${spec.source}'.`);
    }
    await run("mount", ["--bind", model.folder(ds), target]);
    if (spec.options.includes("ro")) await run("mount", ["-o", "remount,bind,ro", target]);
  };
  return {
    root,
    model,
    zfsPath,
    zpoolPath,
    zfs: (args) => runCommand(zfsPath, args),
    mount,
    async mountAll(specs, target) {
      for (const spec of specs) await mount(spec, target);
    },
    calls: () => model.calls(),
  };
}
