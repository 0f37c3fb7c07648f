/**
 * A user namespace with an id map and a network namespace it owns, both bound to files, made
 * without newuidmap: a helper process is started in a new user and network namespace
 * (`unshare --user --net`), says when it is there, and waits on its stdin; the daemon (root in
 * the host's user namespace) writes its uid_map and gid_map, binds `/proc/<pid>/ns/user` and
 * `/proc/<pid>/ns/net` to the two files, and closes the helper's stdin, which ends it. The
 * namespaces live on in their bindings.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mount } from "../../core/fs/mount.js";
import type { IdMap, IdRange } from "../../core/userns/id-map.js";

/** How long the helper may take to start (a loaded machine takes milliseconds). */
const READY_TIMEOUT_MS = 30_000;

const mapText = (ranges: readonly IdRange[]) => ranges.map((r) => `${r.containerID} ${r.hostID} ${r.size}`).join("\n") + "\n";

export async function makeUsernsNetns(userFile: string, netFile: string, idMap: IdMap): Promise<void> {
  const helper = spawn("unshare", ["--user", "--net", "--", "sh", "-c", "echo ready; read _"], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => {
    helper.once("close", () => resolve());
    helper.once("error", () => resolve()); // never started
  });
  let stderr = "";
  helper.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`unshare did not start within ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
      helper.stdout.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      helper.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      helper.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`unshare --user --net exited with ${code}: ${stderr.trim()}`));
      });
    });
    const pid = helper.pid!;
    writeFileSync(`/proc/${pid}/uid_map`, mapText(idMap.uids));
    writeFileSync(`/proc/${pid}/gid_map`, mapText(idMap.gids));
    await mount(`/proc/${pid}/ns/user`, userFile, "bind");
    await mount(`/proc/${pid}/ns/net`, netFile, "bind");
  } finally {
    helper.stdin.end();
    // it reads EOF and exits; one that hangs on is ended (bounded: it is our own child)
    const late = setTimeout(() => helper.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(late);
  }
}
