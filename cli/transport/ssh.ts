/**
 * ssh:// hosts: an SSH connection to the host, and for each request a `direct-streamlocal`
 * channel (OpenSSH's forwarding to a unix socket) to the daemon's socket there. Public keys only:
 * the SSH agent's (SSH_AUTH_SOCK; it holds the passphrase-protected ones), then the unencrypted
 * ~/.ssh/id_ed25519, id_ecdsa, id_rsa. The host's key must be in ~/.ssh/known_hosts (or
 * /etc/ssh/ssh_known_hosts), hashed or not: unlike `ssh` there is no prompt to accept a new key,
 * so an unknown host is refused with the command that would add it.
 *
 * One SSH connection per process and host serves all requests. It holds the process open only
 * while a channel is open, so nothing needs closing at exit; closeSshConnections() ends them early.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import ssh2 from "ssh2";
import type { AnyAuthMethod, Client as SshClient, ClientChannel } from "ssh2";
import { HostError, type Target } from "./dial.js";

type SshTarget = Extract<Target, { proto: "ssh" }>;

const KEY_FILES = ["id_ed25519", "id_ecdsa", "id_rsa"];
/** ssh2's host key algorithms, in its order of preference. */
const HOST_KEY_ALGORITHMS = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"];

interface Shared {
  client: SshClient;
  socket: Socket;
  channels: number;
}

const connections = new Map<string, Promise<Shared>>();

/** A channel to the daemon's socket on `target`'s host. */
export async function dialSsh(target: SshTarget, env: NodeJS.ProcessEnv): Promise<Duplex> {
  const user = target.user ?? (env.USER || userInfo().username);
  const key = `${user}@${target.host}:${target.port}`;
  let pending = connections.get(key);
  if (!pending) {
    pending = connectSsh(target, user, env);
    connections.set(key, pending);
    pending.catch(() => connections.delete(key));
  }
  const shared = await pending;
  return openChannel(shared, target, user);
}

/** Ends every SSH connection this process opened (channels still open end with them). */
export function closeSshConnections(): void {
  for (const pending of connections.values()) pending.then((s) => s.client.end(), () => undefined);
  connections.clear();
}

function openChannel(shared: Shared, target: SshTarget, user: string): Promise<Duplex> {
  shared.channels++;
  shared.socket.ref();
  const released = () => {
    if (--shared.channels === 0) shared.socket.unref();
  };
  return new Promise((resolve, reject) => {
    try {
      shared.client.openssh_forwardOutStreamLocal(target.socket, (err: Error | undefined, channel: ClientChannel) => {
        if (err) {
          released();
          reject(new HostError(`Cannot connect to the engine daemon at ${where(target, user)}${target.socket}. Is the engine daemon running? (the SSH server could not open ${target.socket}: ${err.message.replace(/^\(SSH\) Channel open failure: /, "")})`));
          return;
        }
        channel.once("close", released);
        resolve(channel);
      });
    } catch (err) {
      // the connection closed since it was made
      released();
      reject(new HostError(`error during connect: ssh: the connection to ${where(target, user)} was lost: ${(err as Error).message}`));
    }
  });
}

const where = (t: SshTarget, user: string) => `ssh://${user}@${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;

async function connectSsh(target: SshTarget, user: string, env: NodeJS.ProcessEnv): Promise<Shared> {
  const home = env.HOME || homedir();
  const knownHosts = [join(home, ".ssh/known_hosts"), join(home, ".ssh/known_hosts2"), "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"];
  const hostName = target.port === 22 ? target.host : `[${target.host}]:${target.port}`;
  const known = readKnownHosts(knownHosts, hostName);
  const keys = privateKeys(home);
  const agent = env.SSH_AUTH_SOCK || undefined;
  if (!agent && keys.length === 0) {
    throw new HostError(`error during connect: ssh: no key to log in to ${where(target, user)} with: no SSH agent (SSH_AUTH_SOCK) and no unencrypted ${join(home, ".ssh")}/${KEY_FILES.join(", ")}`);
  }

  const socket = await tcpConnect(target);
  const client = new ssh2.Client();
  let refusal: HostError | undefined;
  const methods: AnyAuthMethod[] = [
    ...(agent ? [{ type: "agent" as const, username: user, agent }] : []),
    ...keys.map((k) => ({ type: "publickey" as const, username: user, key: k.data })),
  ];
  const tried = [...(agent ? ["the SSH agent's keys"] : []), ...keys.map((k) => k.path)];

  return new Promise<Shared>((resolve, reject) => {
    client.once("ready", () => {
      socket.unref();
      const shared: Shared = { client, socket, channels: 0 };
      client.on("close", () => connections.delete(`${user}@${target.host}:${target.port}`));
      resolve(shared);
    });
    client.on("error", (err: Error & { level?: string }) => {
      // an unreachable agent is not fatal: the key files come next
      if (err.level === "agent") return;
      socket.destroy();
      if (refusal) reject(refusal);
      else if (err.level === "client-authentication") {
        reject(new HostError(`error during connect: ssh: permission denied (publickey) for ${where(target, user)}: none of these keys was accepted: ${tried.join(", ")}`));
      } else reject(new HostError(`error during connect: ssh: ${where(target, user)}: ${err.message}`));
    });
    client.on("close", () => reject(refusal ?? new HostError(`error during connect: ssh: ${where(target, user)} closed the connection`)));
    client.connect({
      sock: socket,
      username: user,
      strictVendor: false,
      readyTimeout: 30_000,
      algorithms: { serverHostKey: preferredHostKeyAlgorithms(known) as never },
      hostVerifier: (hostKey: Buffer) => {
        refusal = checkHostKey(hostKey, known, hostName, target, knownHosts[0]);
        return refusal === undefined;
      },
      authHandler: (_left, _partial, next) => {
        const method = methods.shift();
        next(method ?? (false as never));
      },
    });
  });
}

function tcpConnect(target: SshTarget): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: target.host, port: target.port });
    socket.once("connect", () => resolve(socket));
    socket.once("error", (err: NodeJS.ErrnoException) => {
      const why = err.code === "ECONNREFUSED" ? "Connection refused" : err.code === "ENOTFOUND" || err.code === "EAI_AGAIN" ? "Could not resolve hostname" : err.message;
      reject(new HostError(`error during connect: ssh: connect to host ${target.host} port ${target.port}: ${why}`));
    });
  });
}

/** The unencrypted default key files; encrypted ones need the agent. */
function privateKeys(home: string): { path: string; data: Buffer }[] {
  const found: { path: string; data: Buffer }[] = [];
  for (const name of KEY_FILES) {
    const path = join(home, ".ssh", name);
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch {
      continue;
    }
    const parsed = ssh2.utils.parseKey(data);
    if (!(parsed instanceof Error)) found.push({ path, data });
  }
  return found;
}

interface KnownKey {
  type: string;
  blob: Buffer;
  revoked: boolean;
  /** "file:line", for messages. */
  at: string;
}

/** The keys the known_hosts files list for `hostName` ("host" or "[host]:port"). */
function readKnownHosts(files: string[], hostName: string): KnownKey[] {
  const keys: KnownKey[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    text.split("\n").forEach((raw, i) => {
      const fields = raw.trim().split(/\s+/);
      if (!fields[0] || fields[0].startsWith("#")) return;
      let marker = "";
      if (fields[0].startsWith("@")) marker = fields.shift()!;
      // certificate authorities sign host certificates, which this client does not ask for
      if (marker === "@cert-authority" || fields.length < 3) return;
      const [patterns, type, base64] = fields;
      if (!hostMatches(patterns, hostName)) return;
      keys.push({ type, blob: Buffer.from(base64, "base64"), revoked: marker === "@revoked", at: `${file}:${i + 1}` });
    });
  }
  return keys;
}

/** A known_hosts host field: `|1|salt|hash`, or patterns (`*`, `?`, `!negated`) separated by commas. */
function hostMatches(field: string, hostName: string): boolean {
  if (field.startsWith("|1|")) {
    const [salt, hash] = field.slice(3).split("|");
    if (!salt || !hash) return false;
    const mine = createHmac("sha1", Buffer.from(salt, "base64")).update(hostName).digest();
    const theirs = Buffer.from(hash, "base64");
    return mine.length === theirs.length && timingSafeEqual(mine, theirs);
  }
  const name = hostName.toLowerCase();
  let matched = false;
  for (const raw of field.toLowerCase().split(",")) {
    const negated = raw.startsWith("!");
    const pattern = negated ? raw.slice(1) : raw;
    const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
    if (!re.test(name)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

/** The algorithms of the keys known for the host first, as OpenSSH orders them, so the host shows a key we can check. */
function preferredHostKeyAlgorithms(known: KnownKey[]): string[] {
  const first = new Set<string>();
  for (const k of known.filter((k) => !k.revoked)) {
    if (k.type === "ssh-rsa") ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"].forEach((a) => first.add(a));
    else if (HOST_KEY_ALGORITHMS.includes(k.type)) first.add(k.type);
  }
  return [...first, ...HOST_KEY_ALGORITHMS.filter((a) => !first.has(a))];
}

/** undefined when the host's key is known; otherwise why it is refused. */
function checkHostKey(blob: Buffer, known: KnownKey[], hostName: string, target: SshTarget, userFile: string): HostError | undefined {
  const type = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString("latin1");
  const shown = `${type} key SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
  const same = known.filter((k) => k.blob.equals(blob));
  const revoked = same.find((k) => k.revoked);
  if (revoked) return new HostError(`error during connect: ssh: the host key of ${hostName} (${shown}) is marked as revoked (${revoked.at}): refusing to connect`);
  if (same.length > 0) return undefined;
  const other = known.find((k) => !k.revoked && k.type === type);
  if (other) {
    return new HostError(
      `error during connect: ssh: the host key of ${hostName} has changed: it is now ${shown}, ${other.at} has another. ` +
        `Someone could be intercepting the connection, or the host's key was replaced; if you know it was, remove the old key (ssh-keygen -R "${hostName}") and add the new one.`,
    );
  }
  const scan = `ssh-keyscan${target.port === 22 ? "" : ` -p ${target.port}`} ${target.host} >> ${userFile}`;
  return new HostError(
    `error during connect: ssh: the host key of ${hostName} is not known (${shown}); engine never accepts a new host key by itself. ` +
      `Check the fingerprint, then add the key to ${userFile}, e.g.: ${scan}`,
  );
}
