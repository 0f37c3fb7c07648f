/** ssh:// hosts: TO BE WRITTEN (helper D). */
import type { Duplex } from "node:stream";
import { HostError, type Target } from "./dial.js";

export async function dialSsh(target: Extract<Target, { proto: "ssh" }>, _env: NodeJS.ProcessEnv): Promise<Duplex> {
  throw new HostError(`ssh://${target.host}: not written yet`);
}
