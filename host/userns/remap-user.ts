/**
 * Who `--userns-remap` names, as Docker reads it: `default` (the user and group `engine-remap`,
 * made with useradd(8) and given a free range of 65536 subordinate ids when missing), a user
 * name or uid, optionally with `:group` or `:gid`. Names and ids must exist (passwd and group
 * through getent(1), so that NSS users count); a uid alone takes the gid of the same number.
 * The map's uid ranges are the user's in /etc/subuid (by uid, then by name); its gid ranges are
 * the group's in /etc/subgid when a group is named, else the user's.
 */
import { execFileSync } from "node:child_process";
import { errors } from "../../core/errors.js";
import type { IdMap } from "../../core/userns/id-map.js";
import { addRanges, idRangesOf, SUBGID_FILE, SUBUID_FILE } from "./subordinate-ids.js";

/** The user (and group) `--userns-remap=default` stands for. */
const DEFAULT_REMAP_USER = "engine-remap";

export interface Account {
  name: string;
  id: number;
}

export interface RemapIdentity {
  user: Account;
  group: Account;
  /** Whether a group was named (its subgid ranges are then looked up first). */
  groupGiven: boolean;
}

const isId = (s: string) => /^\d+$/.test(s);

/** One passwd or group entry by name or id, or undefined when there is none. */
function getent(db: "passwd" | "group", key: string): Account | undefined {
  let out: string;
  try {
    out = execFileSync("getent", [db, key], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
  } catch (err) {
    if ((err as { status?: number }).status === 2) return undefined; // "key not found"
    throw errors.usernsLookup(`cannot look up ${key} in ${db} with getent: ${(err as Error).message}`);
  }
  const f = out.split("\n")[0].split(":");
  return { name: f[0], id: Number(f[2]) };
}

/** The accounts `value` names; `default` makes engine-remap when it is missing. */
export function resolveRemapIdentity(value: string): RemapIdentity & { created: boolean } {
  const [userPart, groupPart] = value.split(":", 2);
  let created = false;
  let user: Account | undefined;
  if (isId(userPart)) {
    user = getent("passwd", userPart);
    if (!user) throw errors.usernsLookup(`Uid ${userPart} has no entry in /etc/passwd`);
  } else {
    const name = userPart === "default" ? DEFAULT_REMAP_USER : userPart;
    user = getent("passwd", name);
    if (!user && userPart !== "default") throw errors.usernsLookup(`Error during uid lookup for "${name}": no such user`);
    if (!user) {
      createRemapUser(name);
      created = true;
      user = getent("passwd", name);
      if (!user) throw errors.usernsUserCreate(name, "useradd succeeded but the user cannot be found");
    }
  }
  let group: Account | undefined;
  if (groupPart !== undefined && groupPart !== "") {
    group = getent("group", groupPart);
    if (!group) throw errors.usernsLookup(isId(groupPart) ? `Gid ${groupPart} has no entry in /etc/group` : `Error during groupname lookup for "${groupPart}": no such group`);
  } else {
    // a uid alone takes the gid of the same number; a name, the group of the same name
    const key = isId(userPart) ? userPart : user.name;
    group = getent("group", key);
    if (!group) throw errors.usernsLookup(isId(userPart) ? `Gid ${key} has no entry in /etc/group` : `Error during gid lookup for "${key}": no such group`);
  }
  return { user, group, groupGiven: groupPart !== undefined && groupPart !== "", created };
}

/** useradd --system, with a group of the same name, no home and no login shell (Docker's dockremap). */
function createRemapUser(name: string): void {
  try {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/bin/false", name], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 30_000,
    });
  } catch (err) {
    const why = String((err as { stderr?: Buffer }).stderr ?? "").trim() || (err as Error).message;
    throw errors.usernsUserCreate(name, why);
  }
}

/** The id map of `who`: its subordinate ranges; the default user gets ranges when it has none. */
export function remapIdMap(who: RemapIdentity, isDefault: boolean): IdMap {
  const userKeys = [String(who.user.id), who.user.name];
  const groupKeys = who.groupGiven ? [String(who.group.id), who.group.name, ...userKeys] : userKeys;
  if (isDefault) {
    try {
      addRanges(who.user.name);
    } catch (err) {
      throw errors.usernsUserCreate(who.user.name, (err as Error).message);
    }
  }
  const uids = idRangesOf(SUBUID_FILE, userKeys);
  if (uids.length === 0) throw errors.usernsNoRanges("subuid", `user "${who.user.name}"`, SUBUID_FILE);
  const gids = idRangesOf(SUBGID_FILE, groupKeys);
  if (gids.length === 0) {
    throw errors.usernsNoRanges("subgid", who.groupGiven ? `group "${who.group.name}" or user "${who.user.name}"` : `user "${who.user.name}"`, SUBGID_FILE);
  }
  return { uids, gids };
}
