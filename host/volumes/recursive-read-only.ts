/**
 * Whether a read-only mount can be made recursively read-only (`rro`: its submounts read-only
 * too, mount_setattr(2) with AT_RECURSIVE), as Docker's daemon decides it: a kernel of 5.12 or
 * newer, and an OCI runtime whose `features` list the `rro` mount option (runc 1.1 and newer).
 * Asked once per runtime binary: neither changes while the daemon runs.
 */
import { release } from "node:os";
import { execFileAsync } from "../../core/exec-file.js";

const known = new Map<string, Promise<string | undefined>>();

function kernelAtLeast(major: number, minor: number): boolean {
  const [a = 0, b = 0] = release().split(/[.-]/).map(Number);
  return a > major || (a === major && b >= minor);
}

/** Why `runtimePath` (named `runtimeName`) cannot mount recursively read-only, in Docker's words; undefined when it can. */
export function recursiveReadOnlyRefusal(runtimeName: string, runtimePath: string): Promise<string | undefined> {
  const key = `${runtimeName}\0${runtimePath}`;
  let answer = known.get(key);
  if (!answer) {
    answer = ask(runtimeName, runtimePath);
    known.set(key, answer);
  }
  return answer;
}

async function ask(runtimeName: string, runtimePath: string): Promise<string | undefined> {
  if (!kernelAtLeast(5, 12)) return "rro is not supported: the kernel is older than 5.12";
  try {
    const { stdout } = await execFileAsync(runtimePath, ["features"], { timeout: 10_000 });
    const features = JSON.parse(stdout) as { mountOptions?: string[] };
    return features.mountOptions?.includes("rro") ? undefined : `rro is not supported by runtime "${runtimeName}"`;
  } catch {
    return `rro is not supported by runtime "${runtimeName}": OCI features struct is not available`;
  }
}
