/** `engine restart`: stop (as `stop` does) and start again each container, printing each name as given. */
import { stopLikeCommand } from "../container/stop-like.js";

export const command = stopLikeCommand("restart");
