/**
 * Opens every listener the operator asked for and serves the same request handler on each:
 * plain HTTP on unix sockets, HTTP or HTTPS (with `--tls`, see tls-server.ts) on TCP and
 * activated sockets. If one listener fails, those already open are closed again before the
 * error goes up.
 */
import type { RequestListener, Server as HttpServer } from "node:http";
import { http as nodeHttp } from "../../core/node-http.js";
import { serveUpgrades } from "./upgrade.js";
import { answerUnparsable } from "./client-error.js";
import type { AddressInfo, Server } from "node:net";
import type { Logger } from "pino";
import { errors } from "../../core/errors.js";
import { formatAddress, type ListenAddress } from "./parse-host.js";
import { selectActivationFds } from "./socket-activation.js";
import type { TlsSetup } from "./tls-options.js";
import { createTlsFront } from "./tls-server.js";
import { clearStaleSocket, setSocketAccess } from "./unix-socket.js";

export interface ListenerOptions {
  handler: RequestListener;
  /** Present when TLS is on: used for TCP and activated sockets. */
  tls?: TlsSetup;
  group: string;
  groupGiven: boolean;
  activationFds: readonly number[];
  log: Logger;
}

export interface Listener {
  /** The address as -H spells it, with the real port when 0 was asked for. */
  address: string;
  server: Server;
  close(): Promise<void>;
}

const INSECURE_TCP_WARNING =
  "Binding to an IP address without --tlsverify is insecure and gives root access on this machine to everyone who has access to your network.";

export async function openListeners(addresses: readonly ListenAddress[], opts: ListenerOptions): Promise<Listener[]> {
  const open: Listener[] = [];
  try {
    for (const addr of addresses) open.push(...(await openOne(addr, opts)));
  } catch (err) {
    await Promise.allSettled(open.map((l) => l.close()));
    throw err;
  }
  return open;
}

async function openOne(addr: ListenAddress, opts: ListenerOptions): Promise<Listener[]> {
  switch (addr.proto) {
    case "unix": {
      await clearStaleSocket(addr.path);
      const served = makeServer(opts.handler, undefined, opts.log);
      await listen(served.server, { path: addr.path }, formatAddress(addr));
      setSocketAccess(addr.path, opts.group, opts.groupGiven, opts.log);
      return [listener(served, formatAddress(addr))];
    }
    case "tcp": {
      if (!opts.tls?.verify) opts.log.warn({ address: formatAddress(addr) }, INSECURE_TCP_WARNING);
      const served = makeServer(stripPrefix(addr.prefix, opts.handler), opts.tls, opts.log);
      await listen(served.server, { host: addr.host, port: addr.port }, formatAddress(addr));
      const port = (served.server.address() as AddressInfo).port;
      return [listener(served, formatAddress({ ...addr, port }))];
    }
    case "fd": {
      const fds = selectActivationFds(opts.activationFds, addr.fd);
      const out: Listener[] = [];
      for (const fd of fds) {
        const served = makeServer(opts.handler, opts.tls, opts.log);
        await listen(served.server, { fd }, `fd://${fd}`);
        out.push(listener(served, `fd://${fd}`));
      }
      return out;
    }
  }
}

const httpOptions = {
  // Uploads (image loads) and streams may take long; the API has no request deadline.
  requestTimeout: 0,
  keepAliveTimeout: 30_000,
};

/** The server that listens, and the HTTP server that serves its connections (the same without TLS). */
interface Served {
  server: Server;
  http: HttpServer;
}

function makeServer(handler: RequestListener, tls: TlsSetup | undefined, log: Logger): Served {
  const http = nodeHttp.createServer(httpOptions, handler);
  // Docker's clients half-close an attach connection when they send no stdin: the answer (the
  // container's output) must still flow, so a client's FIN does not end the socket. (A
  // property, not a constructor option.)
  (http as HttpServer & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  serveUpgrades(http, handler);
  answerUnparsable(http);
  return { server: tls ? createTlsFront(http, tls, log) : http, http };
}

/** `tcp://host:port/PATH`: requests carry PATH first; it is removed before routing. */
function stripPrefix(prefix: string, handler: RequestListener): RequestListener {
  if (prefix === "") return handler;
  return (req, res) => {
    const url = req.url ?? "/";
    if (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) {
      req.url = url.slice(prefix.length) || "/";
      handler(req, res);
      return;
    }
    res.writeHead(404, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ message: "page not found" }) + "\n");
  };
}

function listen(server: Server, where: { path?: string; host?: string; port?: number; fd?: number }, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(err.code === "EADDRINUSE" ? errors.listenerAddressInUse(name) : err);
    };
    server.once("error", onError);
    server.listen(where, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

/** Time that requests in flight get to finish when a listener closes. */
const CLOSE_GRACE_MS = 2000;

/**
 * Stops accepting, and resolves once the connections have ended or the grace period is over.
 * Idle keep-alive clients would hold close() open: closed at once; requests in flight get the
 * grace period, then their connections are closed. A stream taken over from HTTP (attach, exec
 * start) is no longer the HTTP server's to close, and would hold close() open for as long as its
 * client stays: it is left to end with its container, which the daemon's shutdown stops after
 * the listeners are closed (waiting for it there kept a SIGTERM'd daemon from ever stopping
 * while a `docker attach` was open). Docker's daemon does not wait for hijacked connections
 * either (Go's http.Server.Shutdown does not track them).
 */
function listener({ server, http }: Served, address: string): Listener {
  return {
    address,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // (With TLS the HTTP server does not listen: close() only stops its connection checks.)
        if (http !== server) http.close();
        http.closeIdleConnections();
        setTimeout(() => {
          http.closeAllConnections();
          resolve();
        }, CLOSE_GRACE_MS).unref();
      }),
  };
}
