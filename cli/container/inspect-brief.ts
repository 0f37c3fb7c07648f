/** What `start -a` and `attach` need to know of a container before they attach. */
import type { Connection } from "../connection.js";

export interface ContainerBrief {
  Id: string;
  Config: { Tty?: boolean; OpenStdin?: boolean };
  HostConfig: { AutoRemove?: boolean };
  State: { Running?: boolean; Paused?: boolean; Restarting?: boolean };
}

export const inspectContainer = (conn: Connection, ref: string): Promise<ContainerBrief> => conn.getJson<ContainerBrief>(`/containers/${encodeURIComponent(ref)}/json`);
