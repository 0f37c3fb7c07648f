/**
 * A program, run by port-forward.ts inside a pod's network namespace (`nsenter --net=<pinned
 * file> node port-forward-helper.js <port>`; a Node process cannot change its own namespace):
 * connects to the pod's `localhost:<port>` (IPv4, then IPv6) and copies its stdin there and
 * what comes back to its stdout. A connection that cannot be made exits 1 with the reason on
 * stderr.
 */
import { connect, type Socket } from "node:net";

function open(port: number, hosts: string[]): void {
  const socket: Socket = connect(port, hosts[0]);
  let connected = false;
  socket.once("connect", () => {
    connected = true;
    process.stdin.pipe(socket);
    socket.pipe(process.stdout);
    socket.once("end", () => process.stdout.end());
    process.stdout.once("finish", () => process.exit(0));
  });
  socket.once("error", (err: NodeJS.ErrnoException) => {
    // a connection reset after it stood: the forward ends as the peer ended it
    if (connected) return process.exit(0);
    if (hosts.length > 1) return open(port, hosts.slice(1));
    process.stderr.write(`dial tcp ${hosts[0].includes(":") ? `[${hosts[0]}]` : hosts[0]}:${port}: ${err.code === "ECONNREFUSED" ? "connect: connection refused" : err.message}`);
    process.exit(1);
  });
}

if (process.argv[1]?.endsWith("port-forward-helper.js")) open(Number(process.argv[2]), ["127.0.0.1", "::1"]);
