/** PLACEHOLDER: to be written in this session (issue 8). */
import { ExitError, type Command } from "../command.js";

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [],
  async run() {
    throw new ExitError(1, "engine system-prune: not written yet");
  },
};
