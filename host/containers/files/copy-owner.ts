/**
 * The owner `docker cp -a` (copyUIDGID) gives copied files: the container's user (Config.User,
 * `name`, `uid`, `name:group`, `uid:gid`), looked up in the container's own /etc/passwd and
 * /etc/group, read through scoped-fs. A container without a user keeps the tar's owners, as
 * Docker does.
 */
import { closeSync, readFileSync } from "node:fs";
import { errors } from "../../../core/errors.js";
import { openFileForReadAt, type ScopedRoot } from "./scoped-fs.js";

/** Largest /etc/passwd or /etc/group read (a container could make one huge). */
const MAX_DB = 4 * 1024 * 1024;

/** The lines of /etc/passwd or /etc/group in the container's root, split at `:` (none when missing or too big). */
export function readDb(root: ScopedRoot, path: string): string[][] {
  let r;
  try {
    r = root.resolve(path, { followLast: true });
  } catch {
    return [];
  }
  try {
    if (r.name === "") return [];
    const opened = openFileForReadAt(r.dirFd, r.name);
    if (!opened) return [];
    try {
      if (opened.stats.size > MAX_DB) return [];
      return readFileSync(opened.fd, "utf8").split("\n").filter((l) => l && !l.startsWith("#")).map((l) => l.split(":"));
    } finally {
      closeSync(opened.fd);
    }
  } finally {
    r.close();
  }
}

const isId = (s: string) => /^\d+$/.test(s);

/** The uid and gid of `user` inside the container, or undefined when the container has no user. */
export function containerOwner(root: ScopedRoot, user: string | undefined): { uid: number; gid: number } | undefined {
  if (!user) return undefined;
  // `:gid` is root with that group, as `docker run --user :gid` runs
  const [named, groupPart] = user.split(":", 2);
  const userPart = named === "" ? "0" : named;
  const passwd = readDb(root, "/etc/passwd");
  const entry = passwd.find((f) => (isId(userPart) ? f[2] === userPart : f[0] === userPart));
  if (!entry && !isId(userPart)) throw errors.containerUserNotFound(`unable to find user ${userPart}: no matching entries in passwd file`);
  const uid = Number(isId(userPart) ? userPart : entry![2]);
  let gid = entry ? Number(entry[3]) : 0;
  if (groupPart) {
    if (isId(groupPart)) gid = Number(groupPart);
    else {
      const group = readDb(root, "/etc/group").find((f) => f[0] === groupPart);
      if (!group) throw errors.containerUserNotFound(`unable to find group ${groupPart}: no matching entries in group file`);
      gid = Number(group[2]);
    }
  }
  return { uid, gid };
}
