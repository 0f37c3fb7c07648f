/**
 * Whether a read-only mount can be made recursively read-only (`rro`: its submounts read-only
 * too, mount_setattr(2) with AT_RECURSIVE), as Docker's daemon decides it: a kernel of 5.12 or
 * newer, and an OCI runtime whose `features` list the `rro` mount option (runc 1.1 and newer).
 * Asked once per runtime binary: neither changes while the daemon runs.
 */
import { execFileSync } from "node:child_process";
import { release } from "node:os";

const known = new Map<string, string | undefined>();

function kernelAtLeast(major: number, minor: number): boolean {
  const [a = 0, b = 0] = release().split(/[.-]/).map(Number);
  return a > major || (a === major && b >= minor);
}

/** Why `runtimePath` (named `runtimeName`) cannot mount recursively read-only, in Docker's words; undefined when it can. */
export function recursiveReadOnlyRefusal(runtimeName: string, runtimePath: string): string | undefined {
  const key = `${runtimeName}\0${runtimePath}`;
  if (known.has(key)) return known.get(key);
  let why: string | undefined;
  if (!kernelAtLeast(5, 12)) why = "rro is not supported: the kernel is older than 5.12";
  else {
    try {
      const features = JSON.parse(execFileSync(runtimePath, ["features"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] })) as {
        mountOptions?: string[];
      };
      if (!features.mountOptions?.includes("rro")) why = `rro is not supported by runtime "${runtimeName}"`;
    } catch {
      why = `rro is not supported by runtime "${runtimeName}": OCI features struct is not available`;
    }
  }
  known.set(key, why);
  return why;
}
