/**
 * A git repository as the build context (`remote=https://host/repo.git#ref:subdir`), fetched
 * with the host's `git` as Docker's daemon does (builder/remotecontext/git/gitutils.go):
 * `git init`, `origin` added, only `ref` fetched (`master` when the URL names none, as Docker
 * 20.10 still does), shallow (`--depth 1`) unless the server cannot (git's dumb HTTP: then again
 * in full), `git checkout ref` or else the fetched commit, submodules (`--recursive
 * --depth=1`), and the context is `subdir`, resolved inside the checkout (symlinks within it).
 * As in Docker, the context of a whole repository holds its `.git` folder.
 *
 * git runs isolated from the host's configuration (no system or user gitconfig, as Docker's
 * newer daemons), never prompts, and may use only the protocols it is given: for a client's
 * URL http, https, git and ssh, so that neither the URL nor a submodule reaches the host's own
 * repositories through `file://`. The whole clone has a time limit; git is killed (its process
 * group) when it passes, or when the caller's signal fires.
 */
import { spawn } from "node:child_process";
import { mkdir, stat } from "node:fs/promises";
import { errors } from "../../../core/errors.js";
import { redactURL } from "./remote-kind.js";
import { OutsideScopeError, resolveInScope } from "./scoped-path.js";

export interface GitRemote {
  /** What git fetches from: the URL without its fragment. */
  remote: string;
  ref: string;
  /** The context's folder in the repository, "" for the whole of it. */
  subdir: string;
}

export interface CloneOptions {
  /** The transports git may use (GIT_ALLOW_PROTOCOL), for the URL and its submodules. */
  protocols: string[];
  /** The time the whole clone may take, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The protocols a client's URL may use. */
export const CLIENT_GIT_PROTOCOLS = ["http", "https", "git", "ssh"];

/** The output of a git command kept for a message. */
const OUTPUT_BYTES = 16 * 1024;

/**
 * `url#ref:subdir` split as Docker splits it; a bare `github.com/x/y` gets https. (Any scheme
 * is kept: which ones a client may name is remote-kind.ts's rule, which git may use `protocols`.)
 */
export function parseGitRemote(url: string): GitRemote {
  const transport = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) || url.startsWith("git@");
  const full = transport ? url : `https://${url}`;
  const hash = full.indexOf("#");
  const remote = hash < 0 ? full : full.slice(0, hash);
  let fragment = hash < 0 ? "" : full.slice(hash + 1);
  if (!full.startsWith("git@")) fragment = unescapeFragment(fragment); // a URL's fragment may be %-escaped
  const colon = fragment.indexOf(":");
  const ref = colon < 0 ? fragment : fragment.slice(0, colon);
  const subdir = colon < 0 ? "" : fragment.slice(colon + 1);
  return { remote, ref: ref === "" ? "master" : ref, subdir };
}

function unescapeFragment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Clones `url` (with its `#ref:subdir`) into `dest` (made here, 0700) and answers the folder
 * that is the context: `dest` itself or the subdir in it.
 */
export async function cloneGitContext(url: string, dest: string, opts: CloneOptions): Promise<string> {
  const repo = parseGitRemote(url);
  const shown = redactURL(repo.remote);
  // a ref that git would read as an option
  if (repo.ref.startsWith("-")) throw errors.contextGitFailed(`invalid refspec: ${repo.ref}`);
  await mkdir(dest, { mode: 0o700 });
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  /** git on the checkout (`repoDirs` false: in its folder only, as `git submodule` needs). */
  const run = async (what: string, args: string[], repoDirs = true): Promise<GitResult> => {
    const dirs = repoDirs ? ["--work-tree", dest, "--git-dir", `${dest}/.git`] : [];
    const r = await runGit([...dirs, ...args], { protocols: opts.protocols, signal, cwd: dest });
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (deadline.aborted) throw errors.contextGitFailed(`${what}: git took longer than ${opts.timeoutMs / 1000} s`);
    return r;
  };
  const must = async (what: string, args: string[], repoDirs = true): Promise<void> => {
    const r = await run(what, args, repoDirs);
    if (r.status !== 0) throw gitFailed(what, r);
  };

  await must("error initializing the repository", ["init", "--quiet"]);
  await must(`error adding the remote ${shown}`, ["remote", "add", "origin", repo.remote]);
  const fetching = `error fetching ${repo.ref} from ${shown}`;
  let fetched = await run(fetching, ["fetch", "--depth", "1", "--", "origin", repo.ref]);
  // git's dumb HTTP protocol cannot fetch shallow: then in full, as Docker fetches from such a server
  if (fetched.status !== 0 && /does not support shallow/.test(fetched.output)) fetched = await run(fetching, ["fetch", "--", "origin", repo.ref]);
  if (fetched.status !== 0) throw gitFailed(fetching, fetched);

  const checkingOut = `error checking out ${repo.ref}`;
  const checkout = await run(checkingOut, ["checkout", "--quiet", repo.ref]);
  // not a branch name (a tag, a pull request's ref): the commit just fetched
  if (checkout.status !== 0 && (await run(checkingOut, ["checkout", "--quiet", "FETCH_HEAD"])).status !== 0) throw gitFailed(checkingOut, checkout);
  await must("error initializing submodules", ["submodule", "--quiet", "update", "--init", "--recursive", "--depth=1"], false);
  return contextFolder(dest, repo.subdir);
}

/** A failed git command as the client is told it: what failed, and git's own words. */
function gitFailed(what: string, r: GitResult) {
  return errors.contextGitFailed(`${what}: ${r.output.trim() || `exit status ${r.status}`}`);
}

/** The context's folder: `subdir` inside the checkout, which must be a folder there. */
async function contextFolder(root: string, subdir: string): Promise<string> {
  if (subdir === "") return root;
  let path: string;
  try {
    path = resolveInScope(root, subdir);
  } catch (e) {
    if (e instanceof OutsideScopeError) throw errors.contextGitFailed(`error setting git context, "${subdir}" not within git root`);
    throw errors.contextGitFailed(`error setting git context: ${(e as Error).message}`);
  }
  const st = await stat(path).catch(() => undefined);
  if (!st) throw errors.contextGitFailed(`error setting git context, "${subdir}" does not exist in the repository`);
  if (!st.isDirectory()) throw errors.contextGitFailed(`error setting git context, not a directory: ${subdir}`);
  return path;
}

interface GitResult {
  status: number | null;
  output: string;
}

/** The environment git runs with: the daemon's (its proxies), without git's own variables, isolated. */
function gitEnv(protocols: string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GIT_")) env[k] = v;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1", // no /etc/gitconfig
    HOME: "/dev/null", // no ~/.gitconfig
    GIT_TERMINAL_PROMPT: "0", // a credential prompt would wait forever
    GIT_ALLOW_PROTOCOL: protocols.join(":"),
    LC_ALL: "C", // git's messages in English, for the client and the tests
  };
}

/** Runs git; resolves with its status and output (stdout and stderr, capped); killed on `signal`. */
function runGit(args: string[], opts: { protocols: string[]; signal: AbortSignal; cwd?: string }): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    if (opts.signal.aborted) return resolve({ status: null, output: "" });
    // its own process group, so that the helpers it starts (git-remote-https, ssh) go with it
    const child = spawn("git", args, { cwd: opts.cwd, env: gitEnv(opts.protocols), stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    const keep = (d: Buffer) => {
      if (output.length < OUTPUT_BYTES) output += d.toString("utf8");
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone already
      }
    };
    opts.signal.addEventListener("abort", kill, { once: true });
    child.once("error", (e: NodeJS.ErrnoException) => {
      opts.signal.removeEventListener("abort", kill);
      reject(e.code === "ENOENT" ? errors.contextGitMissing(`git: ${e.message}`) : e);
    });
    child.once("close", (status) => {
      opts.signal.removeEventListener("abort", kill);
      resolve({ status, output: output.slice(0, OUTPUT_BYTES) });
    });
  });
}
