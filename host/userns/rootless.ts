/**
 * `--rootless`: what a rootless daemon needs, checked before anything is made. Rootless mode is
 * the daemon and its containers running without root on the host: engined runs as an ordinary
 * user inside a user namespace (made by RootlessKit with newuidmap/newgidmap from the user's
 * subordinate ranges, with a network namespace of its own that slirp4netns or pasta connects),
 * where it is "root" with the capabilities of that namespace only.
 *
 * Refused, with Docker's reasons: root of the host's user namespace (dockerd-rootless.sh "must
 * be executed as a non-privileged user"), `--userns-remap` beside it, and a start that lacks any
 * of: a user namespace, XDG_RUNTIME_DIR and HOME it can write, newuidmap and newgidmap, 65536
 * subordinate uids and gids, slirp4netns or pasta, and an overlay it may mount (fuse-overlayfs,
 * or Linux 5.11+). Every missing piece is named at once. Without cgroup v2 the start goes on,
 * but limits cannot be set (returned as warnings).
 */
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { release, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import { errors } from "../../core/errors.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { idRangesOf, SUBGID_FILE, SUBUID_FILE } from "./subordinate-ids.js";

/** What the checks read about the process and the host (tests give their own). */
export interface RootlessProbe {
  euid: number;
  user: string;
  /** `/proc/self/uid_map`. */
  uidMap: string;
  onPath(command: string): boolean;
  writable(path: string): boolean;
  /** Subordinate ids the user has in `file`. */
  subordinateIds(file: string): number;
  kernel: string;
  cgroup2: boolean;
}

const NEEDED_IDS = 65536;

export function hostProbe(env: NodeJS.ProcessEnv): RootlessProbe {
  const euid = process.geteuid?.() ?? 0;
  const user = (() => {
    try {
      return userInfo().username;
    } catch {
      return String(euid);
    }
  })();
  return {
    euid,
    user,
    uidMap: readOr("/proc/self/uid_map"),
    onPath: (command) => (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && allows(join(dir, command), constants.X_OK)),
    writable: (path) => allows(path, constants.W_OK | constants.X_OK),
    subordinateIds: (file) => idRangesOf(file, [String(euid), user]).reduce((n, r) => n + r.size, 0),
    kernel: release(),
    cgroup2: existsSync("/sys/fs/cgroup/cgroup.controllers"),
  };
}

/** Whether the process is in a user namespace other than the host's (whose map is the identity of every id). */
function inUserNamespace(uidMap: string): boolean {
  return !/^\s*0\s+0\s+4294967295\s*$/.test(uidMap);
}

/** Throws when `--rootless` is set and cannot work here; returns warnings for what works only in part. */
export function checkRootless(config: DaemonConfig, env: NodeJS.ProcessEnv, probe: RootlessProbe = hostProbe(env)): string[] {
  if (!config.rootless) return [];
  if (config["userns-remap"]) throw errors.rootlessWithRemap();
  const userns = inUserNamespace(probe.uidMap);
  if (probe.euid === 0 && !userns) throw errors.rootlessAsRoot();
  const missing: string[] = [];
  if (!userns) missing.push("a user namespace: engined runs in the host's; start it through RootlessKit (rootlesskit --net=slirp4netns --copy-up=/etc --copy-up=/run engined --rootless)");
  if (!env.XDG_RUNTIME_DIR) missing.push("XDG_RUNTIME_DIR is not set (the socket, pid file and exec root go there)");
  else if (!probe.writable(env.XDG_RUNTIME_DIR)) missing.push(`XDG_RUNTIME_DIR ${env.XDG_RUNTIME_DIR} is not writable`);
  if (!env.HOME) missing.push("HOME is not set (the data root goes under ~/.local/share)");
  else if (!probe.writable(env.HOME)) missing.push(`HOME ${env.HOME} is not writable`);
  const maps = ["newuidmap", "newgidmap"].filter((c) => !probe.onPath(c));
  if (maps.length > 0) missing.push(`${maps.join(" and ")} not on PATH (Debian package uidmap)`);
  if (userns) {
    const mapped = mappedIds(probe.uidMap);
    if (mapped < NEEDED_IDS) missing.push(`the user namespace maps ${mapped} uids (/proc/self/uid_map), at least ${NEEDED_IDS} are needed: give the user ranges in ${SUBUID_FILE} and ${SUBGID_FILE}`);
  } else {
    for (const file of [SUBUID_FILE, SUBGID_FILE]) {
      const have = probe.subordinateIds(file);
      if (have < NEEDED_IDS) missing.push(`${have === 0 ? "no" : `only ${have}`} subordinate ids for user ${probe.user} in ${file} (at least ${NEEDED_IDS}: usermod ${file === SUBUID_FILE ? "-v" : "-w"} <first>-<last> ${probe.user})`);
    }
  }
  if (!probe.onPath("slirp4netns") && !probe.onPath("pasta")) missing.push("slirp4netns or pasta not on PATH, for the network namespace's connection (Debian packages slirp4netns, passt)");
  if (!probe.onPath("fuse-overlayfs") && !kernelAtLeast(probe.kernel, 5, 11)) missing.push(`fuse-overlayfs not on PATH, and Linux ${probe.kernel} cannot mount overlayfs in a user namespace (5.11 or later can)`);
  if (missing.length > 0) throw errors.rootlessMissing(missing);
  return probe.cgroup2 ? [] : ["rootless mode without cgroup v2 (and its delegation to the user): resource limits of containers cannot be applied"];
}

function mappedIds(uidMap: string): number {
  return uidMap.split("\n").map((l) => Number(l.trim().split(/\s+/)[2] ?? 0)).filter(Number.isFinite).reduce((a, b) => a + b, 0);
}

function kernelAtLeast(releaseText: string, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(releaseText);
  if (!m) return false;
  return Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) >= minor);
}

/** access(2): whether this process may use `path` so. */
function allows(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
