/**
 * Sockets on loopback for the tests of published ports (the userland proxy and the host port
 * allocator): TCP and UDP servers on 127.0.0.2 that stand for a container, clients that send a
 * request and read the whole answer (bounded in time), free ports and a check that a port can be
 * bound. Everything a test opens through these goes on `cleanups`, which the suites empty in
 * `afterEach` (`cleanUp`), even when the test failed.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/** The address of the stand-in container's servers (loopback, apart from the clients' 127.0.0.1). */
export const CONTAINER_IP = "127.0.0.2";

/** Everything a test started, closed in afterEach even when the test failed. */
export const cleanups: Array<() => Promise<unknown> | unknown> = [];

export async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => undefined);
}

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, ipv6Only: false }, () => resolve((server.address() as AddressInfo).port));
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

export function bindUdp(socket: UdpSocket, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => resolve(socket.address().port));
  });
}

/** A port nothing listens on at the moment (the kernel's choice), for a proxy to bind. */
export async function freePort(proto: "tcp" | "udp", host: string): Promise<number> {
  if (proto === "tcp") {
    const server = createServer();
    const port = await listen(server, 0, host);
    await closeServer(server);
    return port;
  }
  const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
  const port = await bindUdp(socket, 0, host);
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** A TCP server on 127.0.0.2 that runs `handle` for each connection; closed after the test. */
export async function tcpServer(handle: (socket: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    handle(socket);
  });
  const port = await listen(server, 0, CONTAINER_IP);
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    return closeServer(server);
  });
  return port;
}

/** A UDP server on 127.0.0.2 answering `<the sender's port>|<the datagram>`. */
export async function udpEchoServer(): Promise<{ port: number; senders: Set<number> }> {
  const socket = createSocket("udp4");
  const senders = new Set<number>();
  socket.on("message", (msg, from) => {
    senders.add(from.port);
    socket.send(`${from.port}|${msg.toString()}`, from.port, from.address);
  });
  const port = await bindUdp(socket, 0, CONTAINER_IP);
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { port, senders };
}

/** Connects, writes `data`, half-closes, and resolves with everything the other side sent. */
export function exchange(host: string, port: number, data: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer from ${host}:${port} in 20 s`));
    }, 20_000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      socket.end();
      resolve(Buffer.concat(chunks));
    });
    socket.end(data);
  });
}

/** Sends one datagram from `socket` and waits for one answer (bounded: 3 tries of 1 s). */
export async function udpRequest(socket: UdpSocket, host: string, port: number, text: string): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const answer = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        socket.off("message", onMessage);
        resolve(undefined);
      }, 1_000);
      const onMessage = (msg: Buffer) => {
        clearTimeout(timer);
        socket.off("message", onMessage);
        resolve(msg.toString());
      };
      socket.on("message", onMessage);
      socket.send(text, port, host);
    });
    if (answer !== undefined) return answer;
  }
  throw new Error(`no UDP answer from ${host}:${port}`);
}

export async function udpClient(type: "udp4" | "udp6" = "udp4"): Promise<UdpSocket> {
  const socket = createSocket(type);
  await bindUdp(socket, 0, type === "udp4" ? "127.0.0.1" : "::1");
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return socket;
}

/** Whether `port` on `host` can be bound now (bound and released at once). */
export async function canBind(proto: "tcp" | "udp", host: string, port: number): Promise<boolean> {
  if (proto === "tcp") {
    const server = createServer();
    try {
      await listen(server, port, host);
      await closeServer(server);
      return true;
    } catch {
      return false;
    }
  }
  const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
  try {
    await bindUdp(socket, port, host);
    return true;
  } catch {
    return false;
  } finally {
    socket.close();
  }
}
