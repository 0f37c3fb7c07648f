/** Every command of `engine`, sorted by name. A new command is a file and a line here. */
import type { Command } from "../command.js";
import { infoCommand } from "./info.js";
import { versionCommand } from "./version.js";

export const commands: readonly Command[] = [infoCommand, versionCommand].sort((a, b) => a.name.localeCompare(b.name));
