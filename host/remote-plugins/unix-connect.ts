/**
 * A connection to a unix socket whatever the length of its path. An address holds at most 107
 * bytes of path; a longer one (a managed plugin's socket under a long exec root:
 * `<exec-root>/plugins/<64-hex id>/<name>.sock`) is reached through a descriptor of its folder,
 * `/proc/self/fd/N/<name>`, as conmon reaches its own sockets; the descriptor is closed once the
 * connect is done.
 */
import { closeSync, constants, openSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { basename, dirname } from "node:path";

/** What fits in sockaddr_un's sun_path with its final NUL. */
export const MAX_SOCKET_PATH = 107;
const O_PATH = 0o10000000;

export function connectUnix(path: string): Socket {
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH) return connect(path);
  let fd: number;
  try {
    fd = openSync(dirname(path), O_PATH | constants.O_DIRECTORY);
  } catch {
    // the folder is not there: the error a connect gives, on the socket
    return connect(path);
  }
  const socket = connect(`/proc/self/fd/${fd}/${basename(path)}`);
  let open = true;
  // once only: the number may belong to another file after its close
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  socket.once("connect", close);
  socket.once("error", close);
  socket.once("close", close);
  return socket;
}
