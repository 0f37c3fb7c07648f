/**
 * The host's account files, kept as a test found them: `--userns-remap=default` makes the user
 * and group `engine-remap` (useradd) and gives it subordinate ranges (usermod), which change
 * /etc/passwd, group, shadow, gshadow, subuid, subgid and the shadow tools' `-` backups. A test
 * snapshots them first; `restore` deletes the user it made (userdel, which takes its group and
 * ranges too) and writes back any file that still differs, so the machine is left as it was.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";

const FILES = ["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow", "/etc/subuid", "/etc/subgid"].flatMap((f) => [f, `${f}-`]);

export interface AccountsSnapshot {
  files: Map<string, Buffer | null>;
  /** Whether the user existed when the snapshot was taken (then it is left alone). */
  existed: boolean;
  user: string;
}

const readOrNull = (file: string): Buffer | null => {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
};

export const userExists = (user: string): boolean => spawnSync("getent", ["passwd", user], { stdio: "ignore" }).status === 0;

export function snapshotAccounts(user: string): AccountsSnapshot {
  return { files: new Map(FILES.map((f) => [f, readOrNull(f)])), existed: userExists(user), user };
}

export function restoreAccounts(snap: AccountsSnapshot): void {
  if (!snap.existed && userExists(snap.user)) execFileSync("userdel", [snap.user], { stdio: "ignore" });
  for (const [file, before] of snap.files) {
    const now = readOrNull(file);
    if (before === null) {
      if (now !== null) rmSync(file, { force: true });
    } else if (now === null || !now.equals(before)) {
      writeFileSync(file, before); // an existing file keeps its mode and owner
    }
  }
}

/** The first range of `owner` in a subuid(5) file: its start. */
export function subordinateStart(file: string, owner: string): number {
  const line = readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${owner}:`));
  if (!line) throw new Error(`${owner} has no range in ${file}`);
  return Number(line.split(":")[1]);
}
