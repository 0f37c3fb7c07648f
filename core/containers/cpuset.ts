/**
 * cpuset lists (`0-3,5`): the form Docker's daemon accepts for `CpusetCpus` and `CpusetMems`,
 * and its check that every one named is one the host has. A list is comma-separated numbers
 * or `a-b` ranges with `a <= b`; anything else (spaces, empty parts, `3-1`) is "invalid format"
 * naming the whole value, as Docker words it.
 */

/** The numbers a list names, or undefined when it is not a list. */
export function parseCpusetList(value: string): Set<number> | undefined {
  const found = new Set<number>();
  for (const part of value.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const start = Number(m[1]);
    const end = m[2] === undefined ? start : Number(m[2]);
    // a range past any machine's cpus is refused as not available below, without a huge loop
    if (end < start || end - start > 65_536) return end < start ? undefined : new Set([end]);
    for (let n = start; n <= end; n++) found.add(n);
  }
  return found;
}

/**
 * Docker's two refusals of a cpuset field at create and update, or undefined when it may be
 * used. `what` is "cpus" or "mems"; `available` is the host's list (the root cgroup's), or
 * undefined when the host has no cpuset controller to ask (then only the form is checked).
 */
export function cpusetRefusal(what: "cpus" | "mems", value: string, available: string | undefined): string | undefined {
  if (value === "") return undefined;
  const wanted = parseCpusetList(value);
  if (!wanted) return `Invalid value ${value} for cpuset ${what}: invalid format: ${value}`;
  const have = available === undefined ? undefined : parseCpusetList(available.trim());
  if (!have) return undefined;
  for (const n of wanted) {
    if (!have.has(n)) {
      const noun = what === "cpus" ? "CPUs" : "memory nodes";
      return `Requested ${noun} are not available - requested ${value}, available: ${available!.trim()}`;
    }
  }
  return undefined;
}
