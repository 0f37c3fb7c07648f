/** `engine network prune`: remove every user-defined network no container uses (after asking, unless -f). */
import { pruneCommand } from "../prune/prune-command.js";

export const command = pruneCommand({
  path: "/networks/prune",
  filterExample: "until=<timestamp>",
  warning: () => "WARNING! This will remove all custom networks not used by at least one container.\nAre you sure you want to continue?",
  deleted: (r) => ({ title: "Deleted Networks:", lines: r.NetworksDeleted ?? [] }),
  noTotal: true,
});
