/**
 * Rules between options and the host, checked after flags, file and environment are merged:
 * what one value alone cannot tell. Also the values derived from options (the cgroup driver
 * and parent) so that every reader derives them the same way.
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { errors } from "../errors.js";
import { parseGenericResources } from "../cluster/generic-resources.js";
import { featuresRefusedOn, KNOWN_FEATURES } from "../features.js";
import type { DaemonConfig, Platform } from "./table.js";

export interface RuleHost {
  platform: Platform;
  cgroupVersion: 1 | 2;
  /** systemd runs as init (`/run/systemd/system` exists). */
  systemd: boolean;
}

/** The cgroup driver: `native.cgroupdriver` if given, else systemd on cgroup v2 with systemd, else cgroupfs. */
export function cgroupDriverOf(config: DaemonConfig, host: RuleHost): "cgroupfs" | "systemd" {
  const opt = config["exec-opt"].find((o) => o.startsWith("native.cgroupdriver="));
  if (opt) return opt.slice("native.cgroupdriver=".length) as "cgroupfs" | "systemd";
  return host.cgroupVersion === 2 && host.systemd ? "systemd" : "cgroupfs";
}

/** `--cgroup-parent`, else `/engine` for cgroupfs and `system.slice` for systemd. */
export function cgroupParentOf(config: DaemonConfig, host: RuleHost): string {
  if (config["cgroup-parent"]) return config["cgroup-parent"];
  return cgroupDriverOf(config, host) === "systemd" ? "system.slice" : "/engine";
}

/** Throws one error naming every rule the configuration breaks. */
export function checkRules(config: DaemonConfig, host: RuleHost): void {
  const problems: string[] = [];
  for (const opt of config["exec-opt"]) {
    if (opt.startsWith("isolation=") && host.platform !== "win") problems.push("exec-opt isolation is for the win platform only");
  }
  const driver = cgroupDriverOf(config, host);
  if (driver === "systemd" && !host.systemd) {
    problems.push("native.cgroupdriver=systemd was asked for, but systemd is not running on this host");
  }
  if (driver === "systemd" && config["cgroup-parent"] && !/^[^/]+\.slice$/.test(config["cgroup-parent"])) {
    problems.push(`cgroup-parent for the systemd cgroup driver must be a slice name such as "engine.slice", not "${config["cgroup-parent"]}"`);
  }
  if (host.cgroupVersion === 2 && (config["cpu-rt-period"] > 0 || config["cpu-rt-runtime"] > 0)) {
    problems.push("cpu-rt-period and cpu-rt-runtime are not supported with cgroup v2");
  }
  if (config["cpu-rt-runtime"] > 0 && config["cpu-rt-period"] > 0 && config["cpu-rt-runtime"] > config["cpu-rt-period"]) {
    problems.push("cpu-rt-runtime cannot be higher than cpu-rt-period");
  }
  if (Boolean(config["cri-stream-tls-cert"]) !== Boolean(config["cri-stream-tls-key"])) {
    problems.push("cri-stream-tls-cert and cri-stream-tls-key must be given together");
  }
  if (config["metrics-addr"] && !config.experimental) {
    problems.push("metrics-addr is only supported when experimental is enabled");
  }
  // As Docker's Linux daemon: the feature is refused whatever its value.
  for (const name of featuresRefusedOn(config, host.platform)) {
    problems.push(`feature option '${name}' is only available on the ${KNOWN_FEATURES[name].platforms.join(" and ")} platform`);
  }
  try {
    parseGenericResources(config["node-generic-resource"]);
  } catch (err) {
    problems.push((err as Error).message);
  }
  // One key with two values is refused, as Docker's GetConflictFreeLabels refuses it (the same
  // pair twice is taken once)
  const labels = new Map<string, string>();
  for (const label of config.label) {
    const eq = label.indexOf("=");
    const [key, value] = [label.slice(0, eq), label.slice(eq + 1)];
    const before = labels.get(key);
    if (before !== undefined && before !== value) problems.push(`conflict labels for ${key}=${value} and ${key}=${before}`);
    else labels.set(key, value);
  }
  // As Docker 28's daemon checks it at start (not at the first published port): a proxy binary
  // named must be an absolute path to an executable file, in Go's exec.LookPath words
  const proxyPath = config["userland-proxy-path"];
  if (config["userland-proxy"] && proxyPath) {
    const why = proxyPathProblem(proxyPath);
    if (why) problems.push(`invalid userland-proxy-path: ${why}`);
  }
  const seccomp = config["seccomp-profile"];
  if (seccomp !== "builtin" && seccomp !== "unconfined") {
    try {
      const profile = JSON.parse(readFileSync(seccomp, "utf8")) as unknown;
      if (profile === null || typeof profile !== "object" || Array.isArray(profile)) throw new Error("it is not a JSON object");
    } catch (err) {
      problems.push(`seccomp-profile ${seccomp} cannot be used: ${(err as Error).message}`);
    }
  }
  if (problems.length) throw errors.configRule(problems);
}

/** Why `path` cannot be the userland proxy binary, or undefined. */
function proxyPathProblem(path: string): string | undefined {
  if (!isAbsolute(path)) return `must be an absolute path: ${path}`;
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `exec: "${path}": stat ${path}: ${code === "ENOENT" ? "no such file or directory" : code === "EACCES" ? "permission denied" : (err as Error).message}`;
  }
  if (st.isDirectory()) return `exec: "${path}": is a directory`;
  if ((st.mode & 0o111) === 0) return `exec: "${path}": permission denied`;
  return undefined;
}
