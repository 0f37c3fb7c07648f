/**
 * The unix socket's file: a stale one left by a crash is removed, a live one (another daemon)
 * is an error, and once listening it gets mode 0660 and the group named by `--group`.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { errors } from "../../core/errors.js";

export async function clearStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    mkdirSync(dirname(path), { recursive: true });
    return;
  }
  if (!isSocket) throw errors.listenerInvalidHost(`unix://${path}`, "the path exists and is not a socket");
  if (await answers(path)) throw errors.listenerAddressInUse(`unix://${path}`);
  rmSync(path, { force: true });
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

/**
 * Gives the socket to `group` (root and that group may use it). A missing group is an error
 * when the operator named it, and a warning when it is the default: then only root may.
 */
export function setSocketAccess(path: string, group: string, groupGiven: boolean, log: Logger): void {
  chmodSync(path, 0o660);
  if (group === "") return;
  const gid = /^\d+$/.test(group) ? Number(group) : lookupGroup(group);
  if (gid === undefined) {
    if (groupGiven) throw errors.listenerGroupNotFound(group);
    log.warn({ group, socket: path }, "the group for the API socket does not exist: only root may use the socket");
    return;
  }
  chownSync(path, 0, gid);
}

function lookupGroup(name: string): number | undefined {
  let text: string;
  try {
    text = readFileSync("/etc/group", "utf8");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const [groupName, , gid] = line.split(":");
    if (groupName === name && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  return undefined;
}
