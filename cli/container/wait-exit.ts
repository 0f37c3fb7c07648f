/**
 * Waiting for a container's exit as the Docker CLI does around a start: the wait request is
 * sent, and its headers received, before the container starts (the daemon answers them at
 * once), so an exit as fast as the start itself is not missed. `removed` waits for `--rm` too.
 */
import { readAll, type Connection } from "../connection.js";

export type WaitCondition = "next-exit" | "removed" | "not-running";

/** Resolves once the daemon has the wait; the returned function resolves with the exit status. */
export async function waitForExit(conn: Connection, id: string, condition: WaitCondition, stderr: (t: string) => void): Promise<() => Promise<number>> {
  const res = await conn.call("POST", `/containers/${encodeURIComponent(id)}/wait`, { query: { condition } });
  const result = (async () => {
    try {
      const body = JSON.parse((await readAll(res.body)).toString("utf8")) as { StatusCode: number; Error?: { Message?: string } | null };
      if (body.Error?.Message) {
        stderr(`Error waiting for container: ${body.Error.Message}\n`);
        return 125;
      }
      return body.StatusCode;
    } catch (e) {
      stderr(`error waiting for container: ${(e as Error).message}\n`);
      return 125;
    }
  })();
  return () => result;
}
