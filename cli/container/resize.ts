/**
 * Keeping a container's TTY the size of the client's terminal: once at the start and on each
 * SIGWINCH (`POST /containers/{id}/resize?h=&w=`, or the exec's). A daemon without the endpoint
 * (404) is left alone quietly; the first resize is tried a few times, as the process may not
 * have its terminal yet when the start returns.
 */
import type { Connection } from "../connection.js";

export function monitorTtySize(conn: Connection, path: string): () => void {
  const out = process.stdout;
  let unsupported = false;
  const resize = async (): Promise<boolean> => {
    if (unsupported || !out.rows || !out.columns) return true;
    const res = await conn.request("POST", `${path}/resize`, { query: { h: out.rows, w: out.columns } }).catch(() => undefined);
    if (!res) return false;
    res.body.resume();
    if (res.status === 404) unsupported = true;
    return res.status < 400 || res.status === 404;
  };
  void (async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await resize()) return;
      await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
    }
  })();
  const onResize = () => void resize();
  out.on("resize", onResize);
  return () => void out.off("resize", onResize);
}
