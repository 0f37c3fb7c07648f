/**
 * The two files of a context the build reads before anything else: the Dockerfile (by the name
 * the query gives, `Dockerfile` by default) and `.dockerignore`, found as Docker's daemon finds
 * them (builder/remotecontext/detect.go): the name resolved inside the context, symlinks
 * followed within it (scoped-path.ts); a name whose `..` climbs out is refused; when the default
 * `Dockerfile` is missing, `dockerfile` is tried (only for the default name, as Docker); an
 * empty Dockerfile is an error of its own. Each is read whole, up to a size limit: the parser
 * takes it as a string.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { errors } from "../../../core/errors.js";
import { OutsideScopeError, resolveInScope } from "./scoped-path.js";

/** The default name, and the one tried when it is missing. */
export const DEFAULT_DOCKERFILE = "Dockerfile";
const LOWERCASE_DOCKERFILE = "dockerfile";

/** The largest Dockerfile or .dockerignore read: far past any real one, short of hurting the daemon. */
export const MAX_CONTEXT_FILE_BYTES = 32 * 1024 * 1024;

/** The Dockerfile `name` of the context in `root`: its text and the name it was found by. */
export async function readDockerfile(root: string, name: string): Promise<{ text: string; path: string }> {
  const text = await readScoped(root, name, "Dockerfile");
  if (text === undefined) {
    if (name === DEFAULT_DOCKERFILE && (await readScoped(root, LOWERCASE_DOCKERFILE, "Dockerfile", true)) !== undefined) {
      return readDockerfile(root, LOWERCASE_DOCKERFILE);
    }
    throw errors.contextDockerfileNotFound(name);
  }
  if (text === "") throw errors.contextDockerfileEmpty(name);
  return { text, path: name };
}

/** The text of the context's `.dockerignore`, or undefined when it has none. */
export function readDockerignore(root: string): Promise<string | undefined> {
  return readScoped(root, ".dockerignore", ".dockerignore");
}

/**
 * The text of `name` in `root` (what: how errors call it), or undefined when nothing is there.
 * `probe` only asks whether something is there (Docker's stat): a folder counts, "" stands for it.
 */
async function readScoped(root: string, name: string, what: string, probe = false): Promise<string | undefined> {
  let path: string;
  try {
    path = resolveInScope(root, name);
  } catch (e) {
    if (e instanceof OutsideScopeError) throw errors.contextOutside(name);
    throw errors.contextFileUnreadable(what, (e as Error).message);
  }
  let file;
  try {
    // the path is resolved already: a symlink here would be one made since, not followed
    file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw errors.contextFileUnreadable(what, `open ${name}: ${(e as Error).message}`);
  }
  try {
    const st = await file.stat();
    if (probe) return "";
    if (st.isDirectory()) throw errors.contextFileUnreadable(what, `read ${name}: is a directory`);
    if (!st.isFile()) throw errors.contextFileUnreadable(what, `read ${name}: not a regular file`);
    if (st.size > MAX_CONTEXT_FILE_BYTES) throw errors.contextFileUnreadable(what, `${name} is larger than ${MAX_CONTEXT_FILE_BYTES} bytes`);
    return (await file.readFile()).toString("utf8");
  } finally {
    await file.close();
  }
}
