/** `engine container prune`: remove every stopped container (after asking, unless -f). */
import { pruneCommand } from "../prune/prune-command.js";

export const command = pruneCommand({
  path: "/containers/prune",
  filterExample: "until=<timestamp>",
  warning: () => "WARNING! This will remove all stopped containers.\nAre you sure you want to continue?",
  deleted: (r) => ({ title: "Deleted Containers:", lines: r.ContainersDeleted ?? [] }),
});
