// What the soak reads from the host about engined (started by bench/daemons.mjs in a network
// namespace of its own): the RSS and open descriptors of the daemon and its supervisor, and a
// snapshot of what it has made outside its API (processes, mounts under its folder, interfaces
// and iptables rules in its namespace, files under its data and exec roots), compared at the end
// with the one taken before the clients started. The test helper that finds a daemon's processes,
// mounts and files is the same one the suite's leftover checks use (built into dist/).
import { execFileSync } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { daemonProcesses, extraProcesses, filesUnder, mountsUnder, settle } from "../dist/test/helpers/daemon-leftovers.js";
import { rssMiB } from "./resource-usage.mjs";

/**
 * RSS (MiB) and open descriptors of `pid`, with the descriptors by kind (socket, pipe, anon_inode
 * kinds, files by folder under the daemon's): where a growth comes from. Undefined when it is gone.
 */
export function processFigures(pid, dir) {
  if (!pid) return undefined;
  try {
    const fds = readdirSync(`/proc/${pid}/fd`);
    const kinds = {};
    for (const fd of fds) {
      let target;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      const kind = /^(socket|pipe):/.exec(target)?.[1] ?? (target.startsWith("anon_inode:") ? target : target.startsWith(`${dir}/`) ? `file ${target.slice(dir.length + 1).split("/").slice(0, 2).join("/").replace(/[0-9a-f]{64}/, "<id>")}` : `file ${target}`);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    return { rssMiB: rssMiB(pid), fds: fds.length, kinds };
  } catch {
    return undefined;
  }
}

/** Runs a command in the network namespace of `pid` (the daemon's). */
const inNetns = (pid, cmd, args) => execFileSync("nsenter", [`--net=/proc/${pid}/ns/net`, "--", cmd, ...args], { encoding: "utf8", timeout: 20_000 });

function interfaces(pid) {
  return inNetns(pid, "ip", ["-o", "link", "show"]).split("\n").filter(Boolean).map((l) => l.split(": ")[1].split("@")[0]).sort();
}

/** iptables and ip6tables rules and chains, without counters and comments: what a network adds or takes away. */
function rules(pid) {
  const out = [];
  for (const [family, cmd] of [["v4", "iptables-save"], ["v6", "ip6tables-save"]]) {
    let table = "";
    let text = "";
    try {
      text = inNetns(pid, cmd, []);
    } catch {
      continue; // not installed: nothing to compare
    }
    for (const line of text.split("\n")) {
      if (!line || line.startsWith("#") || line === "COMMIT") continue;
      if (line.startsWith("*")) table = line.slice(1);
      else out.push(`${family} ${table} ${line.replace(/ \[\d+:\d+\]$/, "")}`);
    }
  }
  return out.sort();
}

/** Folders with container or volume contents: not walked (what is in them is the container's). */
const contentFolder = (name) => ["diff", "merged", "work", "_data", "rootfs"].includes(name);

/**
 * Where a registry holds each pulled layer's blob (core/images/distribution.ts): a hint kept after
 * the image goes, for a later push, as Docker keeps its v2metadata-by-diffid.
 */
const keptByDesign = (f) => f.startsWith("image/distribution/");

/** The daemon's marks on the host now; `daemon` as bench/daemons.mjs returns it. */
export function hostSnapshot(daemon) {
  const pid = daemon.proc.pid;
  return {
    processes: daemonProcesses(pid, daemon.dir),
    mounts: mountsUnder(daemon.dir),
    interfaces: interfaces(pid),
    rules: rules(pid),
    data: filesUnder(join(daemon.dir, "data"), 8, contentFolder),
    exec: filesUnder(join(daemon.dir, "exec"), 8, contentFolder),
  };
}

/**
 * What is there now and was not in `before` (waiting up to `settleMs` for what is still going
 * away), and what was in `before` and is gone (an interface or rule the daemon had at the start
 * and lost is as wrong as one left over). `gone`: ids of everything the run removed: a path
 * naming one is a leftover even where the baseline had a folder of that kind. Empty folders the
 * daemon makes on first use (without an id in their name) are not counted.
 */
export async function hostLeftovers(daemon, before, gone, settleMs = 15_000) {
  const pid = daemon.proc.pid;
  const extra = (list, base) => list.filter((x) => !base.includes(x));
  const files = (root, base) => {
    const emptyWorkingFolder = (f) => f.endsWith("/") && !/[0-9a-f]{64}/.test(f) && filesUnder(join(root, f), 0).length === 0;
    return filesUnder(root, 8, contentFolder).filter((f) => !keptByDesign(f) && ((!base.includes(f) && !emptyWorkingFolder(f)) || gone.some((id) => f.includes(id))));
  };
  return {
    processes: (await settle(() => extraProcesses(before.processes, daemonProcesses(pid, daemon.dir)), settleMs)).map((p) => `${p.pid} ${p.command}`),
    mounts: await settle(() => extra(mountsUnder(daemon.dir), before.mounts), settleMs),
    interfaces: await settle(() => extra(interfaces(pid), before.interfaces), settleMs),
    interfacesLost: extra(before.interfaces, interfaces(pid)),
    rules: await settle(() => extra(rules(pid), before.rules), settleMs),
    rulesLost: extra(before.rules, rules(pid)),
    dataFiles: await settle(() => files(join(daemon.dir, "data"), before.data), settleMs),
    execFiles: await settle(() => files(join(daemon.dir, "exec"), before.exec), settleMs),
  };
}
