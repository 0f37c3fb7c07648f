/**
 * OCI bundles for containers the tests run with runc: a busybox root filesystem made from the
 * host's busybox-static (the binary and a relative symlink per applet), and a config.json from
 * `runc spec` with the command, a fresh empty network namespace and a cgroup of its own.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export const RUNC = ["/usr/sbin/runc", "/usr/bin/runc"].find((p) => existsSync(p));
export const BUSYBOX = ["/usr/bin/busybox", "/bin/busybox"].find((p) => existsSync(p));

export function hasCommand(cmd: string, args = ["--version"]): boolean {
  try {
    execFileSync(cmd, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export function makeBusyboxRootfs(dir: string): string {
  const rootfs = join(dir, "rootfs");
  mkdirSync(join(rootfs, "bin"), { recursive: true });
  copyFileSync(BUSYBOX!, join(rootfs, "bin/busybox"));
  for (const a of execFileSync(BUSYBOX!, ["--list"], { encoding: "utf8" }).split("\n")) {
    if (a && a !== "busybox") symlinkSync("busybox", join(rootfs, "bin", a));
  }
  for (const d of ["proc", "dev", "sys", "tmp"]) mkdirSync(join(rootfs, d), { recursive: true });
  return rootfs;
}

/** `runc spec`'s default configuration, read once per call. */
export function runcDefaultSpec(dir: string): Record<string, any> {
  const specDir = join(dir, "spec");
  mkdirSync(specDir, { recursive: true });
  execFileSync(RUNC!, ["spec", "--rootless=false"], { cwd: specDir });
  return JSON.parse(readFileSync(join(specDir, "config.json"), "utf8"));
}

/** A bundle at `<dir>/<folder>` (default: the id) for container `id` running `args` on the shared read-only rootfs. */
export function makeBundle(dir: string, id: string, rootfs: string, spec: Record<string, any>, args: string[], folder = id): string {
  const bundle = join(dir, folder);
  mkdirSync(bundle, { recursive: true });
  const config = structuredClone(spec);
  config.process.args = args;
  config.process.terminal = false;
  config.root = { path: rootfs, readonly: true };
  config.hostname = id.slice(0, 63);
  // No namespace paths: runc makes new ones, the network one empty.
  config.linux.namespaces = config.linux.namespaces.map((n: { type: string }) => ({ type: n.type }));
  config.linux.cgroupsPath = `/${id}`;
  writeFileSync(join(bundle, "config.json"), JSON.stringify(config));
  return bundle;
}

/** Removes the cgroups `/<id>` a test container left in every hierarchy. */
export function removeCgroups(id: string): void {
  for (const h of existsSync("/sys/fs/cgroup") ? readdirSync("/sys/fs/cgroup") : []) {
    const cg = join("/sys/fs/cgroup", h, id);
    if (existsSync(cg)) {
      try {
        rmdirSync(cg);
      } catch {
        // busy or gone
      }
    }
  }
}

/**
 * A runtime script: `runc` itself, except that each `kill` is answered `seconds` after runc
 * sent the signal (as on a machine so loaded that a runtime's process takes that long), so that
 * what follows the kill (the exit, its announcement, a removal) happens before the kill returns.
 */
export function slowKillRuntime(runc: string, seconds: number): string {
  return [
    "#!/bin/sh",
    'for a in "$@"; do',
    `  if [ "$a" = kill ]; then ${runc} "$@"; rc=$?; sleep ${seconds}; exit $rc; fi`,
    "done",
    `exec ${runc} "$@"`,
    "",
  ].join("\n");
}

/**
 * A runtime script for runc whose `command` (`update`, `kill`) first ends the container (runc's
 * own kill, then its state polled, at most 5 s, until runc says stopped): the command then meets
 * what it meets when the container's process ends between the supervisor's look at its record
 * and runc's command, runc's own refusal.
 */
export function exitBeforeRuntime(runc: string, command: "update" | "kill"): string {
  return [
    "#!/bin/sh",
    // the container's id: update's last argument, kill's first (`kill <id> <signal>`)
    command === "update" ? 'for id; do :; done' : 'id=""; next=""; for a in "$@"; do [ -n "$next" ] && id=$a && break; [ "$a" = kill ] && next=1; done',
    'pre=""; seen=""',
    `for a in "$@"; do [ "$a" = ${command} ] && seen=1 && break; pre="$pre $a"; done`,
    'if [ -n "$seen" ]; then',
    `  ${runc} $pre kill "$id" KILL`,
    "  i=0",
    `  while [ $i -lt 100 ] && ! ${runc} $pre state "$id" | grep -q '"status": "stopped"'; do sleep 0.05; i=$((i+1)); done`,
    "fi",
    `exec ${runc} "$@"`,
    "",
  ].join("\n");
}
