/**
 * Device nodes and fifos. Node has no mknod(2), so `/usr/bin/mknod` makes them. Spawning it once
 * per node is slow for layers with many whiteouts, so nodes are queued and made by one shell
 * running mknod for each of them (`flush`).
 *
 * A batch only ever holds nodes of one directory, and the extractor flushes before any other kind
 * of entry, so when mknod runs, the paths are exactly the ones checked when they were queued
 * (the shell resolves them again, but nothing has changed them in between).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

export interface NodeRequest {
  path: string;
  /** c: character device, b: block device, p: fifo. */
  type: "c" | "b" | "p";
  major: number;
  minor: number;
}

const MKNOD = existsSync("/usr/bin/mknod") ? "/usr/bin/mknod" : "mknod";
/** Paths per shell: keeps the argument list far below ARG_MAX. */
const BATCH = 512;

const SCRIPT = `m=$1; shift
while [ $# -gt 0 ]; do
  if [ "$2" = p ]; then "$m" -m 0 -- "$1" p || exit 1
  else "$m" -m 0 -- "$1" "$2" "$3" "$4" || exit 1; fi
  shift 4
done`;

async function run(nodes: NodeRequest[]): Promise<void> {
  const args = ["-c", SCRIPT, "sh", MKNOD];
  for (const n of nodes) args.push(n.path, n.type, String(n.major), String(n.minor));
  await new Promise<void>((res, rej) => {
    const child = spawn("/bin/sh", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", rej);
    child.once("close", (code) => (code === 0 ? res() : rej(new Error(`mknod failed: ${stderr.trim() || `exit ${code}`}`))));
  });
}

/** Makes `nodes` (mode 0, owned by root; the caller sets both after). */
async function makeNodes(nodes: NodeRequest[]): Promise<void> {
  for (let i = 0; i < nodes.length; i += BATCH) await run(nodes.slice(i, i + BATCH));
}

/** A queue of nodes of one directory, with what to do with each once it exists. */
export class NodeBatch<T> {
  private dir: string | undefined;
  private readonly queued = new Map<string, { node: NodeRequest; then: T }>();

  /** Whether a node in `dir` can join the batch (else flush first). */
  accepts(dir: string): boolean {
    return this.dir === undefined || this.dir === dir;
  }

  has(path: string): boolean {
    return this.queued.has(path);
  }

  /** Queues a node; a later one for the same path replaces it (as a later tar entry does). */
  add(dir: string, node: NodeRequest, then: T): void {
    this.dir = dir;
    this.queued.delete(node.path);
    this.queued.set(node.path, { node, then });
  }

  /** Makes every queued node, then calls `after` for each in order. */
  async flush(after: (node: NodeRequest, then: T) => Promise<void>): Promise<void> {
    if (this.queued.size === 0) return;
    const items = [...this.queued.values()];
    this.queued.clear();
    this.dir = undefined;
    await makeNodes(items.map((i) => i.node));
    for (const item of items) await after(item.node, item.then);
  }
}
