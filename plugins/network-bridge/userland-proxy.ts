/**
 * The userland proxy of a published port: it listens on the host address and port and forwards
 * to the container's address and port. NAT rules carry most published traffic; the proxy serves
 * what NAT cannot (connections from the host's own loopback, hairpin traffic from a container to
 * its own published port) and, by holding the bind, keeps other processes off the port.
 *
 * Two ways to run one, chosen by `--userland-proxy-path`:
 * - in-process (no path): a net.Server (TCP) or dgram socket (UDP) in the daemon; a few KiB per
 *   port instead of a process per port;
 * - a binary compatible with Docker's `docker-proxy`: `-proto tcp|udp|sctp -host-ip IP
 *   -host-port N -container-ip IP -container-port N`, readiness on file descriptor 3 ("0\n" when
 *   it listens, "1\n<error>" when it cannot; it then closes fd 3), stopped with SIGTERM.
 *
 * "::" is bound IPv6-only, as docker-proxy binds it (checked: `ss -ltne` shows v6only:1): Docker
 * publishes a port on 0.0.0.0 and on :: as two bindings of the same port, which a dual-stack
 * "::" would make collide. IPv4 clients are served by the 0.0.0.0 (or a specific IPv4) binding.
 *
 * A bind that fails with "address already in use" rejects with PortAlreadyAllocatedError, so a
 * caller that asked for any port can release it and ask the PortAllocator for another.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from "node:dgram";
import { accessSync, constants as fsConstants } from "node:fs";
import { connect, createServer, isIP, isIPv6, type Server, type Socket } from "node:net";
import type { Readable } from "node:stream";
import { goErrnoText } from "../../core/net/go-dial-error.js";
import { hostPort, PortAlreadyAllocatedError } from "./port-allocator.js";

/**
 * Whether this host can listen on IPv6 (Docker's IsV6Listenable: a listener on [::1]:0). Without
 * it a port published on every address is published on IPv4's alone.
 */
export function ipv6Listenable(): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ host: "::1", port: 0, ipv6Only: true }, () => server.close(() => resolve(true)));
  });
}

export interface ProxySpec {
  proto: "tcp" | "udp";
  hostIp: string;
  hostPort: number;
  containerIp: string;
  containerPort: number;
}

export interface ProxyHandle {
  readonly spec: ProxySpec;
  /** Closes the listener and every forwarded connection (in-process) or ends the process. */
  stop(): Promise<void>;
  /** the pid when a binary runs it */
  readonly pid?: number;
}

export interface ProxyOptions {
  /** `--userland-proxy-path`: run this docker-proxy compatible binary instead of proxying in-process. */
  path?: string;
  /** How long the binary may take to report readiness (Docker: 16 s). */
  timeoutMs?: number;
  /** How long the binary gets to exit after SIGTERM before SIGKILL. */
  stopGraceMs?: number;
  /** In-process UDP: a client silent this long loses its socket to the container (Docker: 90 s). */
  udpIdleTimeoutMs?: number;
  /** In-process UDP: clients tracked at once; the least recently active is dropped beyond it. */
  udpMaxClients?: number;
}

const DEFAULT_START_TIMEOUT_MS = 16_000;
const DEFAULT_STOP_GRACE_MS = 2_000;
const UDP_IDLE_TIMEOUT_MS = 90_000;
const UDP_MAX_CLIENTS = 1024;
/** Datagrams a new UDP client may send before its socket to the container is connected. */
const UDP_PENDING_LIMIT = 64;
/** Go's dialer and listener default, which docker-proxy has: half-dead peers are noticed. */
const TCP_KEEPALIVE_MS = 15_000;

/**
 * Starts the proxy of one published port, in-process (path undefined) or through the binary at
 * `path`. Rejects with PortAlreadyAllocatedError (`Bind for 127.0.0.1:8080 failed: port is
 * already allocated`) when the address is in use, with an Error naming the address otherwise.
 */
export function startProxy(spec: ProxySpec, opts: ProxyOptions = {}): Promise<ProxyHandle> {
  // Docker's default host address; an empty one would make Node bind "::".
  const s: ProxySpec = { ...spec, hostIp: spec.hostIp || "0.0.0.0" };
  const invalid = invalidSpec(s);
  if (invalid) return Promise.reject(new Error(`Error starting userland proxy: ${invalid}`));
  if (opts.path !== undefined) return startBinaryProxy(s, opts.path, opts.timeoutMs ?? DEFAULT_START_TIMEOUT_MS, opts.stopGraceMs ?? DEFAULT_STOP_GRACE_MS);
  if (s.proto === "tcp") return startTcpProxy(s);
  return startUdpProxy(s, opts.udpIdleTimeoutMs ?? UDP_IDLE_TIMEOUT_MS, opts.udpMaxClients ?? UDP_MAX_CLIENTS);
}

/** Why the spec cannot be proxied, or undefined. Port 0 is refused: the PortAllocator picks ports. */
function invalidSpec(spec: ProxySpec): string | undefined {
  if (spec.proto !== "tcp" && spec.proto !== "udp") return `unsupported protocol ${String(spec.proto)}`;
  for (const [name, ip] of [["host", spec.hostIp], ["container", spec.containerIp]] as const) {
    if (!isIP(ip)) return `invalid ${name} IP address "${ip}"`;
  }
  for (const [name, port] of [["host", spec.hostPort], ["container", spec.containerPort]] as const) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) return `invalid ${name} port ${port}`;
  }
  return undefined;
}

/** Rejections in docker-proxy's words: `listen tcp4 127.0.0.1:80: bind: address already in use` (its network names the family). */
function bindError(spec: ProxySpec, err: NodeJS.ErrnoException, detail?: string): Error {
  const network = `${spec.proto}${isIP(spec.hostIp) === 6 ? "6" : "4"}`;
  const why = detail ?? `listen ${network} ${hostPort(spec.hostIp, spec.hostPort)}: bind: ${goErrnoText(err)}`;
  if (err.code === "EADDRINUSE") return new PortAlreadyAllocatedError(spec.proto, spec.hostIp, spec.hostPort, why);
  return new Error(`Error starting userland proxy: ${why}`, { cause: err });
}

// ---------------------------------------------------------------- TCP, in-process

async function startTcpProxy(spec: ProxySpec): Promise<ProxyHandle> {
  const live = new Set<Socket>();
  const track = (socket: Socket) => {
    live.add(socket);
    socket.once("close", () => live.delete(socket));
  };
  // allowHalfOpen on both sides: a peer's FIN is passed on (pipe() ends the other side) while
  // the other direction keeps flowing, like docker-proxy's CloseWrite. noDelay as in Go.
  const server = createServer({ allowHalfOpen: true, noDelay: true, keepAlive: true, keepAliveInitialDelay: TCP_KEEPALIVE_MS }, (client) => {
    const backend = connect({
      host: spec.containerIp,
      port: spec.containerPort,
      allowHalfOpen: true,
      noDelay: true,
      keepAlive: true,
      keepAliveInitialDelay: TCP_KEEPALIVE_MS,
    });
    track(client);
    track(backend);
    // An error on either side (a refused container included) ends both: nothing more can be
    // forwarded faithfully. A clean close needs nothing: each socket closes itself once both
    // of its directions are done, and destroying the other then could cut data still queued.
    const abort = () => {
      client.destroy();
      backend.destroy();
    };
    client.on("error", abort);
    backend.on("error", abort);
    client.pipe(backend);
    backend.pipe(client);
  });
  // After listening, errors are accept failures (EMFILE): libuv keeps accepting later.
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(bindError(spec, err)));
    server.listen({ host: spec.hostIp, port: spec.hostPort, ipv6Only: true }, () => {
      server.removeAllListeners("error");
      server.on("error", () => undefined);
      resolve();
    });
  });
  await listening;
  let stopped: Promise<void> | undefined;
  return {
    spec,
    stop: () => (stopped ??= closeServer(server, live)),
  };
}

function closeServer(server: Server, live: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const socket of live) socket.destroy();
  });
}

// ---------------------------------------------------------------- UDP, in-process

interface UdpClient {
  readonly upstream: UdpSocket;
  /** Datagrams received before the upstream socket was connected; null once connected. */
  pending: Buffer[] | null;
  lastActive: number;
}

async function startUdpProxy(spec: ProxySpec, idleMs: number, maxClients: number): Promise<ProxyHandle> {
  // ipv6Only only on udp6: libuv fails a udp4 bind that asks for it (EINVAL).
  const front = createSocket(isIPv6(spec.hostIp) ? { type: "udp6", ipv6Only: true } : { type: "udp4" });
  // Keyed by the client's address and port; Map order is least recently active first.
  const clients = new Map<string, UdpClient>();
  let sweeper: NodeJS.Timeout | undefined;

  const drop = (key: string) => {
    const client = clients.get(key);
    if (!client) return;
    clients.delete(key);
    client.upstream.close();
    if (clients.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  const sweep = () => {
    const idleSince = Date.now() - idleMs;
    // Replies refresh lastActive without reordering, so every entry is looked at (≤ maxClients).
    for (const [key, client] of clients) if (client.lastActive < idleSince) drop(key);
  };

  const open = (key: string, from: RemoteInfo): UdpClient => {
    const upstream = createSocket(isIPv6(spec.containerIp) ? "udp6" : "udp4");
    const client: UdpClient = { upstream, pending: [], lastActive: Date.now() };
    upstream.on("message", (reply) => {
      client.lastActive = Date.now();
      front.send(reply, from.port, from.address, ignore);
    });
    // A connected socket reports the ICMP "port unreachable" of an earlier datagram as
    // ECONNREFUSED: nothing listens yet in the container, which may change; keep the client
    // until it goes idle, as docker-proxy does. Anything else ends this client.
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "ECONNREFUSED") drop(key);
    });
    upstream.connect(spec.containerPort, spec.containerIp, () => {
      const queued = client.pending ?? [];
      client.pending = null;
      for (const datagram of queued) upstream.send(datagram, ignore);
    });
    if (clients.size >= maxClients) drop(clients.keys().next().value!);
    clients.set(key, client);
    sweeper ??= setInterval(sweep, Math.max(10, Math.min(idleMs / 3, 10_000))).unref();
    return client;
  };

  front.on("message", (datagram, from) => {
    const key = `${from.address} ${from.port}`;
    let client = clients.get(key);
    if (client) {
      clients.delete(key);
      clients.set(key, client);
      client.lastActive = Date.now();
    } else client = open(key, from);
    if (client.pending === null) client.upstream.send(datagram, ignore);
    else if (client.pending.length < UDP_PENDING_LIMIT) client.pending.push(datagram);
  });

  await new Promise<void>((resolve, reject) => {
    front.once("error", (err) => reject(bindError(spec, err)));
    front.bind({ address: spec.hostIp, port: spec.hostPort }, () => {
      front.removeAllListeners("error");
      front.on("error", () => undefined); // a failed send back to a client: UDP may lose it
      resolve();
    });
  }).catch((err: unknown) => {
    front.close();
    throw err;
  });

  let stopped: Promise<void> | undefined;
  return {
    spec,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        for (const key of [...clients.keys()]) drop(key);
        front.close(() => resolve());
      })),
  };
}

function ignore(): void {}

// ---------------------------------------------------------------- docker-proxy compatible binary

/**
 * setpriv(1) gives the proxy a parent-death signal, as Docker does with Pdeathsig: if the daemon
 * dies, its proxies die too instead of keeping the ports (the restarted daemon could not bind
 * them). It execs the proxy, so the pid stays the proxy's. The signal follows the thread that
 * spawned: call startProxy from the main thread, not from a worker that may end.
 */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find(isExecutable);

function isExecutable(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function startBinaryProxy(spec: ProxySpec, path: string, timeoutMs: number, graceMs: number): Promise<ProxyHandle> {
  if (!isExecutable(path)) throw new Error(`Error starting userland proxy: ${path} is not an executable file`);
  const args = [
    "-proto", spec.proto,
    "-host-ip", spec.hostIp,
    "-host-port", String(spec.hostPort),
    "-container-ip", spec.containerIp,
    "-container-port", String(spec.containerPort),
  ];
  const [file, argv] = SETPRIV ? [SETPRIV, ["--pdeathsig", "TERM", "--", path, ...args]] : [path, args];
  // stdout is ignored as Docker does; stderr is kept (a little) for the reason of an early exit.
  const child = spawn(file, argv, { stdio: ["ignore", "ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    stderr = (stderr + text).slice(-4096);
  });

  let report = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Error starting userland proxy: timed out after ${timeoutMs} ms waiting for ${path} to listen on ${hostPort(spec.hostIp, spec.hostPort)}`)), timeoutMs);
      const settle = (err?: Error) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      // Kept after the start too: a failed kill() is reported here and must not throw.
      child.on("error", (err) => settle(new Error(`Error starting userland proxy: ${path}: ${err.message}`, { cause: err })));
      const status = child.stdio[3] as Readable | null; // null only when the spawn failed ('error')
      status?.setEncoding("utf8");
      status?.on("data", (text: string) => {
        report += text;
        if (report.startsWith("0\n")) settle();
        else if (report.length >= 2 && report[0] !== "1") settle(new Error(`Error starting userland proxy: ${path} reported ${JSON.stringify(report)}`));
      });
      // "1\n<error>" is complete when the proxy closes fd 3 or exits; 'close' comes after both
      // the exit and the end of its pipes, so no part of the report is missed.
      child.once("close", (code, signal) => {
        if (report.startsWith("0\n")) return;
        const why = report.startsWith("1\n") ? report.slice(2).trim() : stderr.trim() || `${path} exited (${signal ?? `code ${code}`}) before listening`;
        settle(/address already in use/.test(why) ? bindError(spec, Object.assign(new Error(why), { code: "EADDRINUSE" }), why) : new Error(`Error starting userland proxy: ${why}`));
      });
    });
  } catch (err) {
    // The proxy reported an error but may linger; a timed-out one surely does: no orphan.
    await terminate(child, exited, 0);
    throw err;
  }

  let stopped: Promise<void> | undefined;
  return {
    spec,
    pid: child.pid,
    stop: () => (stopped ??= terminate(child, exited, graceMs)),
  };
}

/** SIGTERM (none when graceMs is 0), SIGKILL after graceMs; resolves once the process is reaped. */
async function terminate(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  // No pid: it never started. An exit code or signal: it is already reaped.
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
    if (graceMs > 0) child.kill("SIGTERM");
    await exited;
    clearTimeout(kill);
  }
  closeStdio(child);
}

function closeStdio(child: ChildProcess): void {
  for (const stream of child.stdio) stream?.destroy();
}
