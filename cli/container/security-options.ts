/**
 * The security and namespace flags of `run` and `create` as the Docker CLI reads them:
 * `--security-opt` (each `key=value` or `key:value`; a seccomp profile named by its file is
 * sent as its compacted JSON; `systempaths=unconfined` is the client's own: it becomes empty
 * MaskedPaths and ReadonlyPaths), `--sysctl`, `--storage-opt`, and the `--pid`, `--uts`,
 * `--userns` and `--cgroupns` modes. Errors are the Docker CLI's words.
 */
import { readFileSync } from "node:fs";
import { goQuote } from "../../core/build/go-text.js";
import { openError } from "./env-file.js";
import { compactJson } from "./go-json.js";

const SYSCTLS = ["kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"];

/** `--sysctl NAME=VALUE`: the namespaced ones the Docker CLI lets through. */
export function validSysctl(v: string): string {
  const eq = v.indexOf("=");
  const key = eq < 0 ? "" : v.slice(0, eq);
  if (key === "" || !(SYSCTLS.includes(key) || key.startsWith("net.") || key.startsWith("fs.mqueue."))) throw new Error(`sysctl '${v}' is not allowed`);
  return v;
}

/**
 * The SecurityOpt to send, and the MaskedPaths and ReadonlyPaths (`[]` for
 * `systempaths=unconfined`, else null); null when no `--security-opt` was given.
 */
export function securityOptions(values: readonly string[]): { securityOpt: string[] | null; maskedPaths: string[] | null; readonlyPaths: string[] | null } {
  const opts = values.map((opt) => {
    let sep = opt.indexOf("=");
    const noNewPrivileges = (sep < 0 ? opt : opt.slice(0, sep)) === "no-new-privileges";
    if (sep < 0 && !noNewPrivileges) sep = opt.indexOf(":");
    const key = sep < 0 ? opt : opt.slice(0, sep);
    const value = sep < 0 ? "" : opt.slice(sep + 1);
    if (value === "" && key !== "no-new-privileges") throw new Error(`Invalid --security-opt: ${goQuote(opt)}`);
    if (key !== "seccomp" || value === "unconfined" || value === "builtin") return opt;
    let text: string;
    try {
      text = readFileSync(value, "utf8");
    } catch (e) {
      throw new Error(`opening seccomp profile (${value}) failed: ${openError(value, e as NodeJS.ErrnoException).message}`);
    }
    try {
      return `seccomp=${compactJson(text)}`;
    } catch (e) {
      throw new Error(`compacting json for seccomp profile (${value}) failed: ${(e as Error).message}`);
    }
  });
  if (values.length === 0) return { securityOpt: null, maskedPaths: null, readonlyPaths: null };
  const unconfined = opts.includes("systempaths=unconfined");
  return {
    securityOpt: opts.filter((o) => o !== "systempaths=unconfined"),
    maskedPaths: unconfined ? [] : null,
    readonlyPaths: unconfined ? [] : null,
  };
}

/** `--storage-opt KEY=VALUE`s as a map; null when none. */
export function storageOptions(values: readonly string[]): Record<string, string> | null {
  if (values.length === 0) return null;
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf("=");
    if (eq < 0) throw new Error("invalid storage option");
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

/** `container:NAME` with a name. */
const containerMode = (m: string) => m.startsWith("container:") && m.length > "container:".length;

/** The namespace modes, each checked as the Docker CLI checks it. */
export function namespaceModes(f: { pid: string; uts: string; userns: string; cgroupns: string }): void {
  if (!(f.pid === "" || f.pid === "host" || containerMode(f.pid))) throw new Error("--pid: invalid PID mode");
  if (!(f.uts === "" || f.uts === "host")) throw new Error("--uts: invalid UTS mode");
  if (!(f.userns === "" || f.userns === "host")) throw new Error("--userns: invalid USER mode");
  if (!["", "host", "private"].includes(f.cgroupns)) throw new Error("--cgroupns: invalid CGROUP mode");
}
