/**
 * Kill points for tests: `ENGINE_SUPERVISOR_KILL_POINT=<name>[:<n>]` makes the supervisor
 * SIGKILL itself the n-th time (default the first) it reaches the point `name`, so a test can
 * kill it exactly inside the windows a random kill rarely hits (between a write to the log
 * driver and the save of the drain's progress, inside a rotation). Unset, a point costs one
 * comparison.
 */
const wanted = parseKillPoint(process.env.ENGINE_SUPERVISOR_KILL_POINT);
let reached = 0;

function parseKillPoint(value: string | undefined): { name: string; n: number } | undefined {
  if (!value) return undefined;
  const [name, n] = value.split(":");
  return { name, n: n ? Number(n) : 1 };
}

export function killPoint(name: string): void {
  if (wanted?.name !== name || ++reached < wanted.n) return;
  process.kill(process.pid, "SIGKILL");
}
