/**
 * The context of `POST /build`, taken in before anything is built: the request's body (a tar,
 * plain or compressed) or what its `remote` names (a git repository, a tar or a Dockerfile over
 * http(s)), unpacked or cloned into the build's private folder, with its Dockerfile and
 * `.dockerignore` read. Docker's daemon decides between them in this order
 * (builder/remotecontext/detect.go); the rules are in README.md beside this file.
 *
 * Every failure is an EngineError of the catalogue (core/errors/build-context.ts) with a 4xx
 * status for what the client sent or named, except the host's own (a full disk, no git) and the
 * caller's abort (its signal's reason, as it is). Docker's daemon answers these before its
 * build stream starts, as an HTTP error; after a failure nothing is left in `workDir`.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { errors } from "../../../core/errors.js";
import { DEFAULT_DOCKERFILE, readDockerfile, readDockerignore } from "./context-files.js";
import { downloadRemote } from "./download.js";
import { CLIENT_GIT_PROTOCOLS, cloneGitContext } from "./git-clone.js";
import { redactURL, remoteKind } from "./remote-kind.js";
import { unpackContext } from "./unpack.js";

export interface BuildContextRequest {
  /** The request's body (the context's tar), if it has one; ignored (read and dropped) with `remote`. */
  body: Readable | undefined;
  /** The `remote` query parameter. */
  remote?: string;
  /** The `dockerfile` query parameter: a path inside the context; "Dockerfile" when empty. */
  dockerfile?: string;
  /** An empty private folder (0700) of this build, where the context is made. */
  workDir: string;
  /** Stops it all (the client went away); its reason is what is thrown then. */
  signal?: AbortSignal;
  /** Decompress gzip with zlib even when `unpigz` is installed (the daemon's ENGINE_DISABLE_PIGZ). */
  disablePigz: boolean;
  /** A remote tar or Dockerfile's download as it goes: bytes so far, the length announced. */
  onDownloadProgress?: (p: { url: string; bytes: number; total: number | undefined }) => void;
  limits?: Partial<ContextLimits>;
}

export interface ContextLimits {
  /** The largest remote tar or Dockerfile downloaded, in bytes. */
  downloadBytes: number;
  /** The time a remote download may take, headers to the last byte, in ms. */
  downloadTimeoutMs: number;
  /** The time a git clone may take, submodules included, in ms. */
  gitTimeoutMs: number;
}

const DEFAULT_CONTEXT_LIMITS: ContextLimits = {
  downloadBytes: 2 * 1024 * 1024 * 1024,
  downloadTimeoutMs: 10 * 60_000,
  gitTimeoutMs: 10 * 60_000,
};

/** Where the context came from; `url-dockerfile` has no files (COPY has nothing to copy). */
export type ContextSource = "archive" | "git" | "url-archive" | "url-dockerfile";

export interface BuildContext {
  /** The folder holding the context (an empty one for `url-dockerfile`). */
  root: string;
  dockerfileText: string;
  /** The Dockerfile's path as named, relative to the root (`dockerfile` when the default `Dockerfile` was missing). */
  dockerfilePath: string;
  /** The text of the context's `.dockerignore`, if it has one. */
  dockerignore: string | undefined;
  source: ContextSource;
  /** Removes what was made in `workDir` (not `workDir` itself); safe to call twice. */
  cleanup(): Promise<void>;
}

/** Takes in the context of a build (see the file's comment). */
export async function openBuildContext(req: BuildContextRequest): Promise<BuildContext> {
  const limits = { ...DEFAULT_CONTEXT_LIMITS, ...req.limits };
  const dockerfile = req.dockerfile || DEFAULT_DOCKERFILE;
  const made: string[] = [];
  const cleanup = async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  };
  const remote = req.remote ?? "";
  const kind = remoteKind(remote);
  // Docker does not read the body when `remote` is given; it is dropped so that the answer can go out
  if (kind !== "none") req.body?.resume();
  const fromFolder = async (root: string, source: ContextSource): Promise<BuildContext> => {
    const found = await readDockerfile(root, dockerfile);
    return { root, dockerfileText: found.text, dockerfilePath: found.path, dockerignore: await readDockerignore(root), source, cleanup };
  };
  try {
    switch (kind) {
      case "client-session":
        throw errors.contextRemoteSession();
      case "unrecognized":
        throw errors.contextRemoteUnrecognized(remote);
      case "none": {
        const root = join(req.workDir, "context");
        made.push(root);
        // no body at all is an empty context, as Docker's daemon takes it (no Dockerfile in it)
        await unpackContext(req.body ?? Readable.from([]), root, { borrowed: req.body !== undefined, signal: req.signal, disablePigz: req.disablePigz });
        return await fromFolder(root, "archive");
      }
      case "git": {
        const dest = join(req.workDir, "git");
        made.push(dest);
        const root = await cloneGitContext(remote, dest, { protocols: CLIENT_GIT_PROTOCOLS, timeoutMs: limits.gitTimeoutMs, signal: req.signal });
        return await fromFolder(root, "git");
      }
      case "url": {
        const url = redactURL(remote);
        const body = await downloadRemote(remote, {
          maxBytes: limits.downloadBytes,
          timeoutMs: limits.downloadTimeoutMs,
          signal: req.signal,
          onProgress: req.onDownloadProgress && ((bytes, total) => req.onDownloadProgress!({ url, bytes, total })),
        });
        const root = join(req.workDir, "context");
        made.push(root);
        if (body.kind === "archive") {
          await unpackContext(body.stream, root, { signal: req.signal, disablePigz: req.disablePigz });
          return await fromFolder(root, "url-archive");
        }
        // a Dockerfile alone: Docker parses it as it is, whatever `dockerfile` says
        await mkdir(root, { mode: 0o700 });
        return { root, dockerfileText: body.text, dockerfilePath: dockerfile, dockerignore: undefined, source: "url-dockerfile", cleanup };
      }
    }
  } catch (e) {
    await cleanup();
    throw e;
  }
}
