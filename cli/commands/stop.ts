/** `engine stop`: stop running containers (SIGTERM, or --signal, then SIGKILL after --timeout), printing each name as given. */
import { stopLikeCommand } from "../container/stop-like.js";

export const command = stopLikeCommand("stop");
