/**
 * Opens every listener the operator asked for and serves the same request handler on each:
 * plain HTTP on unix sockets, HTTP or HTTPS (with `--tls`) on TCP and activated sockets.
 * If one listener fails, those already open are closed again before the error goes up.
 */
import { createServer as createHttpServer, type RequestListener, type Server as HttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { serveUpgrades } from "./upgrade.js";
import type { AddressInfo, Server } from "node:net";
import type { TlsOptions } from "node:tls";
import type { Logger } from "pino";
import { errors } from "../../core/errors.js";
import { formatAddress, type ListenAddress } from "./parse-host.js";
import { selectActivationFds } from "./socket-activation.js";
import { clearStaleSocket, setSocketAccess } from "./unix-socket.js";

export interface ListenerOptions {
  handler: RequestListener;
  /** Present when TLS is on: used for TCP and activated sockets. */
  tls?: TlsOptions;
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
      const server = makeServer(opts.handler, undefined);
      await listen(server, { path: addr.path }, formatAddress(addr));
      setSocketAccess(addr.path, opts.group, opts.groupGiven, opts.log);
      return [listener(server, formatAddress(addr))];
    }
    case "tcp": {
      if (!opts.tls?.requestCert) opts.log.warn({ address: formatAddress(addr) }, INSECURE_TCP_WARNING);
      const server = makeServer(stripPrefix(addr.prefix, opts.handler), opts.tls);
      await listen(server, { host: addr.host, port: addr.port }, formatAddress(addr));
      const port = (server.address() as AddressInfo).port;
      return [listener(server, formatAddress({ ...addr, port }))];
    }
    case "fd": {
      const fds = selectActivationFds(opts.activationFds, addr.fd);
      const out: Listener[] = [];
      for (const fd of fds) {
        const server = makeServer(opts.handler, opts.tls);
        await listen(server, { fd }, `fd://${fd}`);
        out.push(listener(server, `fd://${fd}`));
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

function makeServer(handler: RequestListener, tls: TlsOptions | undefined): HttpServer {
  const server = tls ? createHttpsServer({ ...tls, ...httpOptions }, handler) : createHttpServer(httpOptions, handler);
  // Docker's clients half-close an attach connection when they send no stdin: the answer (the
  // container's output) must still flow, so a client's FIN does not end the socket. (A
  // property, not a constructor option.)
  (server as HttpServer & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  serveUpgrades(server, handler);
  return server;
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

function listener(server: HttpServer, address: string): Listener {
  return {
    address,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive clients would hold close() open; long streams get a grace period.
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
      }),
  };
}
