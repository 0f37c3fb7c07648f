/**
 * What the `remote` query parameter of `POST /build` names, by Docker's rules
 * (builder/remotecontext/urlutil and detect.go): they look at the string only, never at what is
 * behind it, so that `https://host/repo.git#main` is cloned while `https://host/ctx.tar` is
 * downloaded, and a local-looking path is refused (the daemon never reads a client's path).
 */

/** The value the Docker CLI sent for its experimental session transport (BuildKit's now). */
const CLIENT_SESSION_REMOTE = "client-session";

export type RemoteKind = "none" | "client-session" | "git" | "url" | "unrecognized";

/** An http(s) URL, by its scheme alone, as Docker's IsURL. */
function isURL(s: string): boolean {
  return s.startsWith("http://") || s.startsWith("https://");
}

/**
 * A git repository, as Docker's IsGitURL: an http(s) URL whose path ends in `.git` (a
 * `#ref:subdir` fragment after it), or a `git://`, `git@`, `ssh://` or `github.com/` prefix.
 * `file://` is not one: a client may not make the daemon clone the host's own repositories.
 */
function isGitURL(s: string): boolean {
  if (isURL(s) && /\.git(?:#.+)?$/.test(s)) return true;
  return ["git://", "github.com/", "git@", "ssh://"].some((prefix) => s.startsWith(prefix));
}

/** Which of Docker's cases `remote` is, in the order its daemon tries them. */
export function remoteKind(remote: string | undefined): RemoteKind {
  if (remote === undefined || remote === "") return "none";
  if (remote === CLIENT_SESSION_REMOTE) return "client-session";
  if (isGitURL(remote)) return "git";
  if (isURL(remote)) return "url";
  return "unrecognized";
}

/**
 * `url` with the password of its user info hidden, for messages: a remote may carry a token
 * (`https://user:token@host/repo.git`) that must not reach a build's output or the log.
 */
export function redactURL(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:#?]*):[^/@#?]*@/i, "$1:xxxxx@");
}
