/**
 * `engine __complete [--] WORDS...`, hidden: what the completion scripts (`engine completion
 * SHELL`) ask for each TAB. WORDS are the words after `engine` up to the one under the cursor
 * ("" for a new word). It prints one candidate a line, `value` or `value<TAB>description`, then
 * a last line that starts with ":" and lists what the shell should do besides: `files` (add
 * file names) and `nospace` (no space after the candidate). It never fails: whatever goes wrong
 * gives no candidates, since its errors would land in the middle of someone's prompt.
 */
import type { Command } from "../command.js";

const oneLine = (text: string) => text.replace(/[\t\r\n]+/g, " ");

export const command: Command = {
  usage: "[WORDS...]",
  flags: [],
  stopAtFirstArg: true,
  async run(ctx, input) {
    let lines: string[] = [];
    let directives: string[] = [];
    try {
      const { complete } = await import("../completion/complete.js");
      const done = await complete(input.args, ctx.env);
      lines = done.candidates.map((c) => (c.description ? `${c.value}\t${oneLine(c.description)}` : c.value));
      directives = [...(done.files ? ["files"] : []), ...(done.nospace ? ["nospace"] : [])];
    } catch {
      // no candidates
    }
    ctx.stdout([...lines, `:${directives.join(" ")}`].join("\n") + "\n");
    return 0;
  },
};
