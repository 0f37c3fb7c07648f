/**
 * The user and group names a tar entry carries beside its numeric owner, as Docker's archives
 * have them (Go's tar.FileInfoHeader names the ids from the daemon host's accounts): `docker cp`
 * and `docker export` show `root/root` where a name is known, the number where it is not. Read
 * from the host's /etc/passwd and /etc/group once per archive: the names are the daemon's, not
 * the container's, whose files a request must not make the daemon trust.
 */
import { readFileSync } from "node:fs";

export interface OwnerNames {
  user(uid: number): string;
  group(gid: number): string;
}

/** id -> name from a passwd or group file (the first name of an id wins, as getpwuid's does). */
function namesById(path: string): Map<number, string> {
  const names = new Map<number, string>();
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return names;
  }
  for (const line of text.split("\n")) {
    const fields = line.split(":");
    if (fields.length < 3 || !/^\d+$/.test(fields[2]) || line.startsWith("#")) continue;
    const id = Number(fields[2]);
    if (!names.has(id)) names.set(id, fields[0]);
  }
  return names;
}

/** The host's names for owners ("" where an id has none: the header then keeps only the number). */
export function hostOwnerNames(files = { passwd: "/etc/passwd", group: "/etc/group" }): OwnerNames {
  const users = namesById(files.passwd);
  const groups = namesById(files.group);
  return { user: (uid) => users.get(uid) ?? "", group: (gid) => groups.get(gid) ?? "" };
}
