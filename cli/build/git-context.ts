/**
 * A git repository as a build context, cloned on the client as the Docker CLI clones it:
 * `URL#ref:subdir` (ref `master` by default, the folder at the top by default); a URL that
 * names no transport gets `https://`; `git init`, `remote add origin`, `fetch --depth 1 origin
 * -- ref` (not shallow from a dumb HTTP server), `checkout ref` or else `FETCH_HEAD`, submodules
 * at depth 1. Every git call blocks `file://` submodules (`protocol.file.allow=never`,
 * `GIT_PROTOCOL_FROM_USER=0`). The folder is a temporary one, removed by the caller.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";

export interface GitCheckout {
  /** The clone, to remove afterwards. */
  root: string;
  /** The context: the clone or its subdirectory. */
  dir: string;
}

interface GitRemote {
  remote: string;
  ref: string;
  subdir: string;
}

/** `ref:subdir` of a URL's fragment. */
function refAndSubdir(fragment: string): { ref: string; subdir: string } {
  const colon = fragment.indexOf(":");
  const ref = colon < 0 ? fragment : fragment.slice(0, colon);
  return { ref: ref || "master", subdir: colon < 0 ? "" : fragment.slice(colon + 1) };
}

const scheme = (url: string) => /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1].toLowerCase() ?? "";

function parseGitUrl(url: string): GitRemote {
  let remote = url;
  if (!remote.startsWith("git@") && !["git", "http", "https", "ssh"].includes(scheme(remote))) remote = `https://${remote}`;
  const hash = remote.indexOf("#");
  const parsed = { remote: hash < 0 ? remote : remote.slice(0, hash), ...refAndSubdir(hash < 0 ? "" : remote.slice(hash + 1)) };
  if (parsed.ref.startsWith("-")) throw new Error(`invalid refspec: ${parsed.ref}`);
  return parsed;
}

/** Whether the server can give a shallow clone: any non-HTTP one, or a "smart" HTTP one. */
async function supportsShallowClone(remote: string): Promise<boolean> {
  if (!["http", "https"].includes(scheme(remote))) return true;
  const service = `${remote}/info/refs?service=git-upload-pack`;
  for (const method of ["HEAD", "GET"]) {
    try {
      const res = await fetch(service, { method });
      await res.body?.cancel();
      if (res.status === 200) return res.headers.get("content-type") === "application/x-git-upload-pack-advertisement";
    } catch {
      // tried again with GET, then taken as dumb
    }
  }
  return false;
}

/** `git -c protocol.file.allow=never ARGS` in `dir`; rejects with Go's CombinedOutput error form. */
function git(dir: string, args: string[], guard = true): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("git", guard ? ["-c", "protocol.file.allow=never", ...args] : args, { cwd: dir, env: { ...process.env, GIT_PROTOCOL_FROM_USER: "0" }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (!err) return resolve(output);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return reject(new Error(`unable to find 'git': exec: "git": executable file not found in $PATH`));
      reject(Object.assign(new Error(`${output}: exit status ${typeof code === "number" ? code : 1}`), { output }));
    });
  });
}

/** Clones `url` into a new temporary folder; errors are the CLI's (the caller adds "unable to prepare context: "). */
export async function cloneGitContext(url: string): Promise<GitCheckout> {
  const repo = parseGitUrl(url);
  const root = mkdtempSync(join(tmpdir(), "engine-build-git"));
  const step = async (args: string[], wrap: (why: string) => string, guard = true) => {
    try {
      return await git(root, args, guard);
    } catch (e) {
      if ((e as Error).message.startsWith("unable to find 'git'")) throw e;
      throw new Error(`unable to 'git clone' to temporary context directory: ${wrap((e as Error).message)}`);
    }
  };
  try {
    await step(["init"], (why) => `failed to init repo at ${root}: ${why}`);
    await step(["remote", "add", "origin", repo.remote], (why) => `failed add origin repo at ${repo.remote}: ${why}`);
    const depth = (await supportsShallowClone(repo.remote)) ? ["--depth", "1"] : [];
    await step(["fetch", ...depth, "origin", "--", repo.ref], (why) => `error fetching: ${why}`);
    try {
      await git(root, ["checkout", repo.ref]);
    } catch (e) {
      await step(["checkout", "FETCH_HEAD"], () => `error checking out ${repo.ref}: ${(e as Error).message}`);
    }
    let dir = root;
    if (repo.subdir) dir = subdirectory(root, repo.subdir);
    await step(["submodule", "update", "--init", "--recursive", "--depth=1"], (why) => `error initializing submodules: ${why}`, false);
    return { root, dir };
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
}

/** The subdirectory, its symlinks resolved, which must stay inside the clone and be a folder. */
function subdirectory(root: string, subdir: string): string {
  const prefix = "unable to 'git clone' to temporary context directory: error setting git context";
  let dir: string;
  try {
    dir = realpathSync(join(root, subdir));
  } catch (e) {
    throw new Error(`unable to 'git clone' to temporary context directory: stat ${join(root, subdir)}: no such file or directory`, { cause: e });
  }
  const top = realpathSync(root);
  if (dir !== top && !dir.startsWith(`${top}${sep}`)) throw new Error(`${prefix}, "${subdir}" not within git root`);
  if (!statSync(dir).isDirectory()) throw new Error(`${prefix}, not a directory: ${dir}`);
  return dir;
}
