/**
 * Why this file: the connections a syslog logger sends on, dialed as Docker's library dials
 * them, with Go's errors: unix (stream), unixgram, udp, tcp, tcp+tls, and "" (the local
 * syslog socket: unixgram then unix, at /dev/log, /var/run/syslog, /var/run/log; else
 * "Unix syslog delivery error"). A dial that fails makes the container's start fail.
 *
 * Node has no unix datagram sockets; node-unix-socket's DgramSocket sends them. It cannot
 * connect(2), so a unixgram dial is checked the way connect would check it: a stream connect
 * to the path answers EPROTOTYPE when a datagram socket is bound there and ECONNREFUSED when
 * nothing is (the same answer connect(2) of a datagram socket gives).
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { DgramSocket } from "node-unix-socket";
import { dialError, goErrno } from "./go-errors.js";
import type { SyslogProto } from "./options.js";

export interface Conn {
  /** Sends one framed message; rejects when the connection is broken. */
  send(data: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
  skipVerify: boolean;
}

const LOCAL_PATHS = ["/dev/log", "/var/run/syslog", "/var/run/log"];
const CLOSE_WAIT_MS = 2000;

function splitHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(colon + 1)) };
}

/** A stream (unix, tcp, tls) socket as a Conn: a write error or a close breaks it. */
function streamConn(sock: Socket): Conn {
  let broken: Error | undefined;
  sock.on("error", (err) => (broken ??= err));
  sock.on("close", () => (broken ??= new Error("connection closed")));
  return {
    send: (data) =>
      new Promise((resolve, reject) => {
        if (broken || sock.destroyed) return reject(broken ?? new Error("connection closed"));
        sock.write(data, (err) => (err ? reject(err) : resolve()));
      }),
    close: () =>
      new Promise((resolve) => {
        if (sock.destroyed) return resolve();
        const timer = setTimeout(() => {
          sock.destroy();
          resolve();
        }, CLOSE_WAIT_MS);
        sock.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
        sock.end();
      }),
  };
}

function dialStream(open: () => Socket, net: string, address: string, readyEvent = "connect"): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const sock = open();
    const fail = (err: Error) => {
      sock.destroy();
      reject(net === "tcp+tls" && !(err as NodeJS.ErrnoException).syscall ? tlsError(err) : dialError(net === "tcp+tls" ? "tcp" : net, address, err));
    };
    sock.once("error", fail);
    sock.once(readyEvent, () => {
      sock.off("error", fail);
      resolve(streamConn(sock));
    });
  });
}

/** Go's words for the certificate faults a test (and an operator) meets most. */
function tlsError(err: Error): Error {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  if (["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "SELF_SIGNED_CERT_IN_CHAIN", "DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"].includes(code)) {
    return new Error("x509: certificate signed by unknown authority");
  }
  if (code === "CERT_HAS_EXPIRED") return new Error("x509: certificate has expired or is not yet valid");
  return new Error(err.message);
}

/** The files of `syslog-tls-*`, read as Docker's tlsconfig.Client reads them (its errors). */
function tlsMaterial(files: TlsFiles): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  if (files.ca) {
    try {
      out.ca = readFileSync(files.ca);
    } catch (err) {
      throw new Error(`could not read CA certificate ${JSON.stringify(files.ca)}: open ${files.ca}: ${goErrno(err)}`);
    }
  }
  if (files.cert || files.key) {
    for (const [which, path] of [["cert", files.cert ?? ""], ["key", files.key ?? ""]] as const) {
      try {
        out[which] = readFileSync(path);
      } catch (err) {
        throw new Error(`Could not load X509 key pair: open ${path}: ${goErrno(err)}`);
      }
    }
  }
  return out;
}

/** Whether a datagram socket is bound at `path` (see the file comment); rejects with Go's dial error. */
function probeDatagram(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = netConnect(path);
    probe.once("connect", () => {
      probe.destroy();
      reject(dialError("unixgram", path, Object.assign(new Error("protocol wrong type"), { code: "EPROTOTYPE", syscall: "connect" })));
    });
    probe.once("error", (err: NodeJS.ErrnoException) => {
      probe.destroy();
      if (err.code === "EPROTOTYPE") resolve();
      else reject(dialError("unixgram", path, err));
    });
  });
}

function unixgramConn(path: string): Conn {
  const sock = new DgramSocket();
  let closed = false;
  sock.on("error", () => {}); // a send's own callback reports its failure
  return {
    send: (data) =>
      new Promise((resolve, reject) => {
        if (closed) return reject(new Error("connection closed"));
        sock.sendTo(data, 0, data.length, path, (err) => (err ? reject(err) : resolve()));
      }),
    close: async () => {
      if (!closed) sock.close();
      closed = true;
    },
  };
}

function udpConn(sock: UdpSocket): Conn {
  let closed = false;
  sock.on("error", () => {});
  return {
    send: (data) =>
      new Promise((resolve, reject) => {
        if (closed) return reject(new Error("connection closed"));
        sock.send(data, (err) => (err ? reject(err) : resolve()));
      }),
    close: () =>
      new Promise((resolve) => {
        if (closed) return resolve();
        closed = true;
        sock.close(() => resolve());
      }),
  };
}

function dialUdp(address: string): Promise<Conn> {
  const { host, port } = splitHostPort(address);
  const sock = createSocket(host.includes(":") ? "udp6" : "udp4");
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      sock.close();
      reject(dialError("udp", address, err));
    };
    sock.once("error", fail);
    sock.connect(port, host || "127.0.0.1", () => {
      sock.off("error", fail);
      resolve(udpConn(sock));
    });
  });
}

async function dialLocal(): Promise<Conn> {
  for (const path of LOCAL_PATHS) {
    try {
      await probeDatagram(path);
      return unixgramConn(path);
    } catch {
      // next
    }
  }
  for (const path of LOCAL_PATHS) {
    try {
      return await dialStream(() => netConnect(path), "unix", path);
    } catch {
      // next
    }
  }
  throw new Error("Unix syslog delivery error");
}

/** Connects as Docker's syslog driver does; rejects with Docker's (Go's) error. */
export async function dial(proto: SyslogProto, address: string, tlsFiles: TlsFiles): Promise<Conn> {
  switch (proto) {
    case "":
      return dialLocal();
    case "unix":
      return dialStream(() => netConnect(address), "unix", address);
    case "unixgram":
      await probeDatagram(address);
      return unixgramConn(address);
    case "udp":
      return dialUdp(address);
    case "tcp": {
      const { host, port } = splitHostPort(address);
      return dialStream(() => netConnect({ host, port }), "tcp", address);
    }
    case "tcp+tls": {
      const { host, port } = splitHostPort(address);
      const material = tlsMaterial(tlsFiles);
      return dialStream(
        () => tlsConnect({ host, port, ...material, rejectUnauthorized: !tlsFiles.skipVerify, minVersion: "TLSv1.2", ...(/^[\d.:]+$/.test(host) ? {} : { servername: host }) }),
        "tcp+tls",
        address,
        "secureConnect",
      );
    }
  }
}
