/**
 * What `engine build` sends, from its PATH | URL | - argument and `-f`, decided in the Docker
 * CLI's order: `-` (stdin: a tar, maybe compressed, or a Dockerfile alone), a local folder,
 * a git URL (cloned here), an http(s) URL (downloaded here). A Dockerfile from stdin (`-f -`)
 * or from outside the folder travels inside the tar under a generated name. The result is the
 * request's body and its `dockerfile` parameter.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import type { ReadableStream } from "node:stream/web";
import { ExitError } from "../command.js";
import { readAll } from "../connection.js";
import { dockerfileRelPath, outsideContext, resolveContextDir } from "./context-dir.js";
import { packContext, type ExtraDockerfile } from "./context-pack.js";
import { addDockerfileToTar, dockerfileTar, isArchive, peekStream } from "./context-stream.js";
import { contextMatcher, walkContext } from "./context-walk.js";
import { withProgress } from "./transfer-progress.js";
import { goDialError } from "../../core/net/go-dial-error.js";

export interface ContextRequest {
  /** The PATH | URL | - argument. */
  context: string;
  /** `-f` as given ("" when not). */
  dockerfile: string;
  stdin: Readable;
  /** Where progress lines go (stdout, or a buffer with -q). */
  progress(text: string): void;
  warn(text: string): void;
  width: number;
}

export interface PreparedContext {
  body: Readable;
  /** The `dockerfile` query parameter ("" for none). */
  dockerfile: string;
  /** Removes what was made for the build (a clone). */
  cleanup(): void;
}

/** An error that happened before anything was sent, printed as the CLI prints it; status 1. */
const fail = (message: string) => new ExitError(1, message);
const prepareError = (e: unknown) => (e instanceof ExitError ? e : fail(`unable to prepare context: ${(e as Error).message}`));

export const isUrl = (s: string): boolean => s.startsWith("http://") || s.startsWith("https://");
const isGitUrl = (s: string): boolean => (isUrl(s) && /\.git(?:#.+)?$/.test(s)) || ["git://", "github.com/", "git@"].some((p) => s.startsWith(p));

const generatedName = () => `.dockerfile.${randomBytes(10).toString("hex")}`;

export async function prepareContext(req: ContextRequest): Promise<PreparedContext> {
  const fromStdin = req.dockerfile === "-";
  if (fromStdin && req.context === "-") throw fail("invalid argument: can't use stdin for both build context and dockerfile");
  const stdinDockerfile = fromStdin ? await readAll(req.stdin) : undefined;
  const nothing = () => undefined;

  if (req.context === "-") return { ...(await streamContext(req.stdin, req, undefined).catch((e) => Promise.reject(prepareError(e)))), cleanup: nothing };
  if (isLocalDir(req.context)) return folderContext(req.context, req, stdinDockerfile, true, nothing);
  if (isGitUrl(req.context)) {
    let checkout;
    try {
      checkout = await (await import("./git-context.js")).cloneGitContext(req.context);
    } catch (e) {
      throw prepareError(e);
    }
    const cleanup = () => rmSync(checkout.root, { recursive: true, force: true });
    try {
      return folderContext(checkout.dir, req, stdinDockerfile, false, cleanup);
    } catch (e) {
      cleanup();
      throw e;
    }
  }
  if (isUrl(req.context)) {
    try {
      const download = await downloadContext(req.context, req);
      const extra = stdinDockerfile ? { name: generatedName(), content: stdinDockerfile } : undefined;
      return { ...(await streamContext(download, req, extra)), cleanup: nothing };
    } catch (e) {
      throw prepareError(e);
    }
  }
  throw fail(`unable to prepare context: path "${req.context}" not found`);
}

function isLocalDir(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** A folder's tar; `fromCwd`: `-f` is relative to the current directory (not for a clone). */
function folderContext(dir: string, req: ContextRequest, stdinDockerfile: Buffer | undefined, fromCwd: boolean, cleanup: () => void): PreparedContext {
  let contextDir: string;
  let rel: string;
  try {
    contextDir = resolveContextDir(dir);
    rel = dockerfileRelPath(contextDir, req.dockerfile, fromCwd);
    if (!fromCwd && outsideContext(rel)) throw new Error(`the Dockerfile (${req.dockerfile}) must be within the build context`);
  } catch (e) {
    throw prepareError(e);
  }
  let content = stdinDockerfile;
  if (!content && outsideContext(rel)) {
    try {
      content = readFileSync(req.dockerfile);
    } catch (e) {
      throw fail(`unable to open Dockerfile: open ${req.dockerfile}: ${(e as NodeJS.ErrnoException).code === "EACCES" ? "permission denied" : (e as Error).message}`);
    }
  }
  let entries;
  try {
    entries = walkContext(contextDir, contextMatcher(contextDir, rel, req.dockerfile === "-"));
  } catch (e) {
    throw fail((e as Error).message);
  }
  const extra: ExtraDockerfile | undefined = content ? { name: generatedName(), content } : undefined;
  return { body: packContext(entries, extra, req.warn), dockerfile: extra ? extra.name : rel, cleanup };
}

/** A stream that is either an archive (sent as it is) or a Dockerfile (sent in a tar of its own). */
async function streamContext(input: Readable, req: ContextRequest, extra: ExtraDockerfile | undefined): Promise<Omit<PreparedContext, "cleanup">> {
  const { head, stream } = await peekStream(input);
  if (isArchive(head)) {
    if (extra) return { body: addDockerfileToTar(stream, extra), dockerfile: extra.name };
    return { body: stream, dockerfile: req.dockerfile };
  }
  if (req.dockerfile === "-") throw new Error("build context is not an archive");
  if (req.dockerfile !== "") throw new Error("ambiguous Dockerfile source: both stdin and flag correspond to Dockerfiles");
  return { body: dockerfileTar(await readAll(stream)), dockerfile: "Dockerfile" };
}

/** The URL's body, through the download's progress lines; an error status is the CLI's message. */
async function downloadContext(url: string, req: ContextRequest): Promise<Readable> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`unable to download remote context ${url}: Get "${url}": ${goDialError(e) ?? ((e as Error).cause as Error | undefined)?.message ?? (e as Error).message}`);
  }
  if (res.status >= 400) {
    const text = (await res.text()).trim();
    throw new Error(`unable to download remote context ${url}: failed to GET ${url} with status ${res.status} ${res.statusText}: ${text}`);
  }
  const body = res.body ? Readable.fromWeb(res.body as ReadableStream) : Readable.from([]);
  const total = Number(res.headers.get("content-length") ?? 0) || 0;
  return withProgress(body, { action: `Downloading build context from remote url: ${url}`, total, write: req.progress, width: req.width });
}

