/** `engine unpause`: thaw the containers named. */
import { eachActionCommand } from "../container/each-action.js";

export const command = eachActionCommand("unpause");
