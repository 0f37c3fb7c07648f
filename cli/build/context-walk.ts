/**
 * Which files of a context folder are sent, walked as the Docker CLI walks it (moby's
 * TarWithOptions): depth first, each directory's names in byte order, symlinks never followed,
 * the folder itself without an entry. `.dockerignore` decides with core/build's IgnoreMatcher,
 * path by path with its directory's state, as patternmatcher's MatchesUsingParentResults; a
 * directory left out is skipped whole unless an exception's text reaches below it, and is then
 * walked without its own entry. The Dockerfile and `.dockerignore` are always sent: the CLI adds
 * exceptions for them, and the daemon removes them after reading them when the patterns match.
 * Before anything is sent, every file to send must be readable: Docker's "error checking context".
 */
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import { byteOrder } from "../../core/archive/tar-entries.js";
import { IgnoreMatcher, readDockerignore, type MatchState } from "../../core/build/dockerignore.js";

export interface ContextEntry {
  /** Slash-separated, relative to the context, without a trailing slash. */
  rel: string;
  abs: string;
  st: Stats;
}

/** The context's .dockerignore patterns plus the exceptions that keep the build's own files (TrimBuildFilesFromExcludes). */
export function contextMatcher(contextDir: string, dockerfileRel: string, dockerfileFromStdin: boolean): IgnoreMatcher | undefined {
  let text: string;
  try {
    text = readFileSync(join(contextDir, ".dockerignore"), "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new Error(`open ${join(contextDir, ".dockerignore")}: ${code === "EACCES" ? "permission denied" : code === "EISDIR" ? "is a directory" : (e as Error).message}`);
  }
  const patterns = readDockerignore(text);
  try {
    const first = new IgnoreMatcher(patterns);
    if (first.matches(".dockerignore")) patterns.push("!.dockerignore");
    if (!dockerfileFromStdin && first.matches(dockerfileRel)) patterns.push(`!${dockerfileRel}`);
    return patterns.length ? new IgnoreMatcher(patterns) : undefined;
  } catch (e) {
    throw new Error(`error checking context: ${(e as Error).message}`);
  }
}

/** The entries to send, in the order of the tar; throws "error checking context: ..." for what cannot be read. */
export function walkContext(contextDir: string, matcher?: IgnoreMatcher): ContextEntry[] {
  const entries: ContextEntry[] = [];
  const walk = (dirAbs: string, dirRel: string, parent: MatchState | undefined) => {
    let names: string[];
    try {
      names = readdirSync(dirAbs).sort(byteOrder);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EACCES") throw new Error(`error checking context: can't stat '${dirAbs}'`);
      throw e;
    }
    for (const name of names) {
      const rel = dirRel ? `${dirRel}/${name}` : name;
      const abs = join(dirAbs, name);
      let st: Stats;
      try {
        st = lstatSync(abs);
      } catch {
        continue; // gone meanwhile: the CLI logs it and goes on
      }
      const state = matcher?.match(rel, parent);
      if (state?.excluded) {
        if (st.isDirectory() && matcher!.mustDescend(rel)) walk(abs, rel, state);
        continue;
      }
      if (st.isSocket()) continue; // tar has no sockets
      if (st.isFile()) checkReadable(abs);
      entries.push({ rel, abs, st });
      if (st.isDirectory()) walk(abs, rel, state);
    }
  };
  walk(contextDir, "", undefined);
  return entries;
}

function checkReadable(abs: string): void {
  try {
    closeSync(openSync(abs, "r"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EACCES") throw new Error(`error checking context: no permission to read from '${abs}'`);
    // gone meanwhile: left to the packer
  }
}
