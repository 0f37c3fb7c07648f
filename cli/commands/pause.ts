/** `engine pause`: freeze every process of the containers named (the cgroup freezer). */
import { eachActionCommand } from "../container/each-action.js";

export const command = eachActionCommand("pause");
