/** `engine volume prune`: remove unused anonymous volumes, or with -a every unused volume (after asking, unless -f). */
import { pruneCommand } from "../prune/prune-command.js";

export const command = pruneCommand({
  path: "/volumes/prune",
  flags: [{ name: "all", short: "a", type: "bool", description: "Remove all unused volumes, not just anonymous ones" }],
  filterExample: "label=<label>",
  warning: (flags) =>
    flags.all
      ? "WARNING! This will remove all local volumes not used by at least one container.\nAre you sure you want to continue?"
      : "WARNING! This will remove anonymous local volumes not used by at least one container.\nAre you sure you want to continue?",
  addFilters: (flags, filters) => {
    if (!flags.all) return;
    if (filters.all) throw new Error("conflicting options: cannot specify both --all and --filter all=1");
    filters.all = { true: true };
  },
  deleted: (r) => ({ title: "Deleted Volumes:", lines: r.VolumesDeleted ?? [] }),
});
