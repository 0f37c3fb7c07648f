/**
 * `--sig-proxy`: the signals the client gets while attached go to the container
 * (`POST /containers/{id}/kill?signal=NAME`) instead of ending the client; Ctrl-C on a terminal
 * without `-t` reaches the container as SIGINT. SIGCHLD, SIGPIPE, SIGWINCH and SIGURG stay the
 * client's, as with the Docker CLI; SIGUSR1 is Node's debugger's and is left alone.
 */
import type { Connection } from "../connection.js";

// (SIGPROF, SIGTRAP, SIGABRT and the like are left to Node and its tools)
const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGALRM", "SIGTSTP", "SIGCONT", "SIGTTIN", "SIGTTOU"];

/** Starts forwarding; the returned function stops it. */
export function forwardSignals(conn: Connection, id: string): () => void {
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of FORWARDED) {
    const handler = () => {
      conn
        .call("POST", `/containers/${encodeURIComponent(id)}/kill`, { query: { signal: sig.slice(3) } })
        .then((res) => res.body.resume())
        .catch(() => undefined);
    };
    try {
      process.on(sig, handler);
      handlers.set(sig, handler);
    } catch {
      // a signal this platform does not have
    }
  }
  return () => {
    for (const [sig, handler] of handlers) process.off(sig, handler);
  };
}
