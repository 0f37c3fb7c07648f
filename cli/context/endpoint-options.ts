/**
 * `--docker host=...,ca=...,cert=...,key=...,skip-tls-verify=...,from=...` of `context create`
 * and `context update` into the docker endpoint and its TLS files, checked as the Docker CLI
 * checks them (cli/command/context/options.go, and the API client it tries to make): unknown
 * keys, unreadable files, a bad boolean, a host its client could not use, TLS material that does
 * not parse. The messages are the Docker CLI's; the caller puts "unable to create docker
 * endpoint config: " in front.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { pathError } from "../archive/go-errors.js";
import type { Contexts } from "./contexts.js";
import { dockerEndpoint, type EndpointMeta } from "./metadata.js";

/** The help's table of keys, as `docker context create --help` prints it. */
export const ENDPOINT_KEYS_HELP = `Docker endpoint config:

NAME                DESCRIPTION
from                Copy named context's Docker endpoint configuration
host                Docker endpoint on which to connect
ca                  Trust certs signed only by this CA
cert                Path to TLS certificate file
key                 Path to TLS key file
skip-tls-verify     Skip TLS certificate validation
`;

const KEYS = new Set(["from", "host", "ca", "cert", "key", "skip-tls-verify"]);

export interface EndpointChoice {
  meta: EndpointMeta;
  /** ca.pem, cert.pem, key.pem as given; undefined when none was. */
  tls?: Record<string, Buffer>;
}

export function endpointFromOptions(contexts: Contexts, options: Record<string, string>): EndpointChoice {
  const unknown = Object.keys(options).filter((k) => !KEYS.has(k));
  // Go's map order is random; sorted is one of its orders
  if (unknown.length) throw new Error(unknown.sort().map((k) => `unrecognized config key: ${k}`).join("\n"));
  if (options.from !== undefined) {
    const ep = dockerEndpoint(contexts.get(options.from));
    if (!ep) throw new Error(`unable to get endpoint from context "${options.from}"`);
    // the endpoint only: its TLS files stay with the other context, as the Docker CLI does it
    return { meta: { ...ep } };
  }
  const tls: Record<string, Buffer> = {};
  for (const [key, file] of [["ca", "ca.pem"], ["cert", "cert.pem"], ["key", "key.pem"]]) {
    const path = options[key];
    if (!path) continue;
    try {
      tls[file] = readFileSync(path);
    } catch (e) {
      throw pathError("open", path, e);
    }
  }
  let skip = false;
  if (options["skip-tls-verify"] !== undefined) {
    const v = options["skip-tls-verify"];
    if (/^(1|t|T|TRUE|true|True)$/.test(v)) skip = true;
    else if (!/^(0|f|F|FALSE|false|False)$/.test(v)) throw new Error(`skip-tls-verify: parsing "${v}": invalid syntax`);
  }
  const meta: EndpointMeta = { SkipTLSVerify: skip };
  const host = options.host ?? "";
  if (host) meta.Host = host;
  const choice: EndpointChoice = { meta, tls: Object.keys(tls).length ? tls : undefined };
  if (host) checkHost(host, choice);
  return choice;
}

/** What the Docker CLI's client makes of the host (and, off sockets and SSH, of the TLS files). */
function checkHost(host: string, choice: EndpointChoice): void {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(host)?.[1];
  if (host.startsWith(":")) throw new Error(`invalid docker endpoint options: parse "${host}": missing protocol scheme`);
  const authority = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(host)?.[1];
  if (authority !== undefined) {
    const at = authority.lastIndexOf("@");
    const hostPort = authority.slice(at + 1);
    const urlError = (why: string) => new Error(`invalid docker endpoint options: parse "${host}": ${why}`);
    if (hostPort.startsWith("[") && !hostPort.includes("]")) throw urlError("missing ']' in host");
    const port = hostPort.startsWith("[") ? hostPort.slice(hostPort.indexOf("]") + 1) : hostPort.slice(Math.max(0, hostPort.lastIndexOf(":")));
    if (port.startsWith(":") && !/^:\d*$/.test(port)) throw urlError(`invalid port "${port}" after host`);
    const name = hostPort.startsWith("[") ? "" : hostPort.slice(0, hostPort.length - (port.startsWith(":") ? port.length : 0));
    // what Go's url.Parse lets through in a host: unreserved, sub-delims, ':', '[', ']', '<', '>', '"'
    const bad = /[^a-zA-Z0-9.\-_~!$&'()*+,;=%:[\]<>"]/.exec(name);
    if (bad) throw urlError(`invalid character "${bad[0]}" in host name`);
    if (scheme?.toLowerCase() === "ssh") {
      const ssh = (why: string) => new Error(`invalid docker endpoint options: ssh host connection is not valid: invalid SSH URL: ${why}`);
      if (at >= 0 && authority.slice(0, at).includes(":")) throw ssh("plain-text password is not supported");
      if (name === "" && !hostPort.startsWith("[")) throw ssh("hostname is empty");
      return;
    }
  }
  const proto = scheme && host.slice(scheme.length).startsWith("://") ? scheme : undefined;
  const isSocket = proto === "unix" || proto === "npipe" || proto === "fd";
  if (!isSocket && (choice.tls || choice.meta.SkipTLSVerify)) checkTls(choice.tls ?? {});
  const addr = proto ? host.slice(proto.length + 3) : "";
  if (!proto || addr === "") throw new Error(`unable to apply docker endpoint options: unable to parse docker host \`${host}\``);
  if (proto === "npipe") throw new Error("unable to apply docker endpoint options: protocol not available");
  // a unix socket's path has room for 108 bytes (sockaddr_un)
  if (proto === "unix" && Buffer.byteLength(addr) > 108) throw new Error(`unable to apply docker endpoint options: unix socket path "${addr}" is too long`);
}

/** The Docker CLI loads the TLS material into its client when it makes one: what does not load is refused. */
function checkTls(tls: Record<string, Buffer>): void {
  const prefix = "invalid docker endpoint options: ";
  const pemBlocks = (b: Buffer) => [...b.toString("latin1").matchAll(/-----BEGIN ([^-]+)-----([\s\S]*?)-----END \1-----/g)];
  if (tls["ca.pem"] && !pemBlocks(tls["ca.pem"]).some((m) => m[1] === "CERTIFICATE" && loads(() => new X509Certificate(m[0])))) {
    throw new Error(`${prefix}failed to retrieve context tls info: ca.pem seems invalid`);
  }
  const key = tls["key.pem"];
  const cert = tls["cert.pem"];
  if (!key || !cert) return;
  const keyBlock = pemBlocks(key)[0];
  if (!keyBlock) throw new Error(`${prefix}no valid private key found`);
  if (/Proc-Type:\s*4,ENCRYPTED/.test(keyBlock[2])) {
    throw new Error(`${prefix}private key is encrypted - support for encrypted private keys has been removed, see https://docs.docker.com/go/deprecated/`);
  }
  const certBlock = pemBlocks(cert).find((m) => m[1] === "CERTIFICATE");
  if (!certBlock) throw new Error(`${prefix}failed to retrieve context tls info: tls: failed to find any PEM data in certificate input`);
  let x509: X509Certificate;
  let privateKey: KeyObject;
  try {
    x509 = new X509Certificate(certBlock[0]);
    privateKey = createPrivateKey(keyBlock[0]);
  } catch (e) {
    throw new Error(`${prefix}failed to retrieve context tls info: tls: ${(e as Error).message}`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new Error(`${prefix}failed to retrieve context tls info: tls: private key does not match public key`);
}

function loads(make: () => unknown): boolean {
  try {
    make();
    return true;
  } catch {
    return false;
  }
}
