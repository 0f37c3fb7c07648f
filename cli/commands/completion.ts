/**
 * `engine completion bash|zsh|fish`: the completion script for that shell, as the Docker CLI's
 * `docker completion SHELL` prints one (how to load each is at its top and in cli/README.md).
 * The scripts ask `engine __complete` for candidates (completion/scripts.ts).
 */
import type { Command } from "../command.js";
import { completionScript, type Shell } from "../completion/scripts.js";

export function completionCommand(shell: Shell): Command {
  return {
    usage: "[OPTIONS]",
    // bash shows no descriptions whatever this says; the flag is there as in the Docker CLI's
    flags: [{ name: "no-descriptions", type: "bool", description: "Disable completion descriptions" }],
    args: { max: 0 },
    async run(ctx, input) {
      ctx.stdout(completionScript(shell, !input.flags["no-descriptions"]));
      return 0;
    },
  };
}
