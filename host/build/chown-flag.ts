/**
 * `COPY --chown` / `ADD --chown` as Docker's classic builder reads it: `user[:group]`, each an
 * id or a name looked up in the image's own /etc/passwd and /etc/group (read inside the step's
 * root, its symlinks kept inside); a group left out is the user's string again, looked up as a
 * group name (`--chown=app` needs a group `app`). Errors are Docker's words.
 */
import { errors } from "../../core/errors.js";
import { readDb } from "../containers/files/copy-owner.js";
import { ScopedRoot } from "../containers/files/scoped-fs.js";

function lookup(root: ScopedRoot, file: string, name: string, what: "uid for user" | "gid for group"): number {
  if (/^\d+$/.test(name)) return Number(name);
  const entry = readDb(root, file).find((fields) => fields[0] === name);
  const id = entry ? Number(entry[2]) : NaN;
  if (!Number.isInteger(id)) throw errors.buildInvalidChown(`can't find ${what} ${name}: no such ${what.split(" ")[2]}: ${name}`);
  return id;
}

/** The owner `spec` names in the root file system mounted at `rootDir`. */
export function chownOwner(rootDir: string, spec: string): { uid: number; gid: number } {
  const parts = spec.split(":");
  if (parts.length > 2) throw errors.buildInvalidChown(`invalid chown string format: ${spec}`);
  const [user, group = user] = parts;
  const root = ScopedRoot.open(rootDir);
  try {
    return { uid: lookup(root, "/etc/passwd", user, "uid for user"), gid: lookup(root, "/etc/group", group, "gid for group") };
  } finally {
    root.close();
  }
}
