/** `engine image prune`: remove dangling images, or with -a every image no container uses (after asking, unless -f). */
import { pruneCommand } from "../prune/prune-command.js";

export const command = pruneCommand({
  path: "/images/prune",
  flags: [{ name: "all", short: "a", type: "bool", description: "Remove all unused images, not just dangling ones" }],
  filterExample: "until=<timestamp>",
  warning: (flags) =>
    flags.all
      ? "WARNING! This will remove all images without at least one container associated to them.\nAre you sure you want to continue?"
      : "WARNING! This will remove all dangling images.\nAre you sure you want to continue?",
  addFilters: (flags, filters) => void ((filters.dangling ??= {})[String(!flags.all)] = true),
  deleted: (r) => ({ title: "Deleted Images:", lines: (r.ImagesDeleted ?? []).map((i) => (i.Untagged ? `untagged: ${i.Untagged}` : `deleted: ${i.Deleted ?? ""}`)) }),
});
