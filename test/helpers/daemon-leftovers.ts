/**
 * What a test daemon leaves on the host, seen from outside: its processes (the daemon's
 * descendants and every process whose command line names the daemon's folder: the supervisor,
 * conmon and what they run), the mounts under its folder, and the files under a root. A test
 * takes a snapshot before it works and compares after, waiting (bounded) for what is still
 * going away.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export interface HostProcess {
  pid: number;
  ppid: number;
  /** The command line, arguments joined by spaces. */
  command: string;
}

function readProcess(pid: number): HostProcess | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name in parentheses may hold spaces and parentheses: the fields follow the last ")"
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return { pid, ppid, command };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** The daemon (`pid`), its descendants, and every process naming `dir` in its command line, with theirs. */
export function daemonProcesses(pid: number, dir: string): HostProcess[] {
  const all = readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map((n) => readProcess(Number(n))).filter((p): p is HostProcess => p !== undefined);
  const children = new Map<number, HostProcess[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found = new Map<number, HostProcess>();
  const take = (p: HostProcess) => {
    if (found.has(p.pid)) return;
    found.set(p.pid, p);
    for (const c of children.get(p.pid) ?? []) take(c);
  };
  for (const p of all) if (p.pid === pid || p.command.includes(dir)) take(p);
  return [...found.values()];
}

/** A process's kind, the same across runs: its program and, for node, its script; ids and paths left out. */
export function processKind(p: HostProcess): string {
  const [program, ...args] = p.command.split(" ");
  const name = program.split("/").pop() ?? program;
  if (name === "node") return `node ${(args.find((a) => a.endsWith(".js")) ?? "").split("/").slice(-2).join("/")}`;
  return name;
}

/** Kinds of `now` beyond the counts of `before`: the processes left over. */
export function extraProcesses(before: readonly HostProcess[], now: readonly HostProcess[]): HostProcess[] {
  const budget = new Map<string, number>();
  for (const p of before) budget.set(processKind(p), (budget.get(processKind(p)) ?? 0) + 1);
  return now.filter((p) => {
    const left = budget.get(processKind(p)) ?? 0;
    budget.set(processKind(p), left - 1);
    return left <= 0;
  });
}

/** Mount points at or under `dir`, as this process sees them (the daemon shares the mount namespace). */
export function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((m) => m && (m === dir || m.startsWith(`${dir}/`)));
}

/** Every path under `root` (relative, directories ending in `/`), to `depth` levels; `skip` names folders not gone into. */
export function filesUnder(root: string, depth = 8, skip: (name: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (dir: string, left: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      const dirLike = e.isDirectory() && !e.isSymbolicLink();
      out.push(relative(root, path) + (dirLike ? "/" : ""));
      if (dirLike && left > 0 && !skip(e.name)) walk(path, left - 1);
    }
  };
  walk(root, depth);
  return out.sort();
}

/** Waits (up to `ms`) until `check` finds nothing; resolves with what it found last. */
export async function settle<T>(check: () => T[] | Promise<T[]>, ms = 10_000): Promise<T[]> {
  const until = Date.now() + ms;
  let left = await check();
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    left = await check();
  }
  return left;
}
