/**
 * Every command of `engine`: its name, its line in the help, and where its code is. A command's
 * file is imported only when it runs. A new command is a file and a line here.
 */
import type { Command, CommandEntry } from "../command.js";

/** The commands that never talk to the daemon (the others may have it pinged ahead: engine.ts). */
const NO_DAEMON = /^(context |completion |logout$|__complete$)/;

const entry = (name: string, description: string, load: () => Promise<{ command: Command }>, aliases?: string[]): CommandEntry => ({
  name,
  description,
  aliases,
  daemon: !NO_DAEMON.test(name),
  load: async () => (await load()).command,
});

export const commands: readonly CommandEntry[] = [
  entry("attach", "Attach the terminal's input and output to a running container", () => import("./attach.js"), ["container attach"]),
  entry("build", "Build an image from a Dockerfile", () => import("./build.js"), ["image build", "builder build"]),
  entry("commit", "Create a new image from a container's changes", () => import("./commit.js"), ["container commit"]),
  entry("completion bash", "Generate the autocompletion script for bash", async () => ({ command: (await import("./completion.js")).completionCommand("bash") })),
  entry("completion fish", "Generate the autocompletion script for fish", async () => ({ command: (await import("./completion.js")).completionCommand("fish") })),
  entry("completion zsh", "Generate the autocompletion script for zsh", async () => ({ command: (await import("./completion.js")).completionCommand("zsh") })),
  entry("container inspect", "Display detailed information on one or more containers", () => import("./container-inspect.js")),
  entry("container prune", "Remove all stopped containers", () => import("./container-prune.js")),
  entry("context create", "Create a context", () => import("./context-create.js")),
  entry("context export", "Export a context to a tar archive FILE or a tar stream on STDOUT.", () => import("./context-export.js")),
  entry("context import", "Import a context from a tar or zip file", () => import("./context-import.js")),
  entry("context inspect", "Display detailed information on one or more contexts", () => import("./context-inspect.js")),
  entry("context ls", "List contexts", () => import("./context-ls.js"), ["context list"]),
  entry("context rm", "Remove one or more contexts", () => import("./context-rm.js"), ["context remove"]),
  entry("context show", "Print the name of the current context", () => import("./context-show.js")),
  entry("context update", "Update a context", () => import("./context-update.js")),
  entry("context use", "Set the current engine context", () => import("./context-use.js")),
  entry("cp", "Copy files/folders between a container and the local filesystem", () => import("./cp.js"), ["container cp"]),
  entry("create", "Create a new container", () => import("./create.js"), ["container create"]),
  entry("diff", "Inspect changes to files or directories on a container's filesystem", () => import("./diff.js"), ["container diff"]),
  entry("events", "Get real time events from the server", () => import("./events.js"), ["system events"]),
  entry("exec", "Execute a command in a running container", () => import("./exec.js"), ["container exec"]),
  entry("export", "Export a container's filesystem as a tar archive", () => import("./export.js"), ["container export"]),
  entry("history", "Show the history of an image", () => import("./history.js"), ["image history"]),
  entry("image inspect", "Display detailed information on one or more images", () => import("./image-inspect.js")),
  entry("image prune", "Remove unused images", () => import("./image-prune.js")),
  entry("images", "List images", () => import("./images.js"), ["image ls", "image list"]),
  entry("import", "Import a tarball's contents as a filesystem image", () => import("./import.js"), ["image import"]),
  entry("info", "Display system-wide information", () => import("./info.js"), ["system info"]),
  entry("inspect", "Return low-level information on containers, images, networks and volumes", () => import("./inspect.js")),
  entry("kill", "Kill one or more running containers", () => import("./kill.js"), ["container kill"]),
  entry("load", "Load images from a tar archive or standard input", () => import("./load.js"), ["image load"]),
  entry("login", "Log in to a registry", () => import("./login.js")),
  entry("logout", "Log out from a registry", () => import("./logout.js")),
  entry("logs", "Fetch the logs of a container", () => import("./logs.js"), ["container logs"]),
  entry("network connect", "Connect a container to a network", () => import("./network-connect.js")),
  entry("network create", "Create a network", () => import("./network-create.js")),
  entry("network disconnect", "Disconnect a container from a network", () => import("./network-disconnect.js")),
  entry("network inspect", "Display detailed information on one or more networks", () => import("./network-inspect.js")),
  entry("network ls", "List networks", () => import("./network-ls.js"), ["network list"]),
  entry("network prune", "Remove all unused networks", () => import("./network-prune.js")),
  entry("network rm", "Remove one or more networks", () => import("./network-rm.js"), ["network remove"]),
  entry("pause", "Pause all processes within one or more containers", () => import("./pause.js"), ["container pause"]),
  entry("port", "List port mappings or a specific mapping for the container", () => import("./port.js"), ["container port"]),
  entry("ps", "List containers", () => import("./ps.js"), ["container ls", "container list", "container ps"]),
  entry("pull", "Download an image from a registry", () => import("./pull.js"), ["image pull"]),
  entry("push", "Upload an image to a registry", () => import("./push.js"), ["image push"]),
  entry("rename", "Rename a container", () => import("./rename.js"), ["container rename"]),
  entry("restart", "Restart one or more containers", () => import("./restart.js"), ["container restart"]),
  entry("rm", "Remove one or more containers", () => import("./rm.js"), ["container rm", "container remove"]),
  entry("rmi", "Remove one or more images", () => import("./rmi.js"), ["image rm", "image remove"]),
  entry("run", "Create and run a new container from an image", () => import("./run.js"), ["container run"]),
  entry("save", "Save one or more images to a tar archive (to standard output by default)", () => import("./save.js"), ["image save"]),
  entry("search", "Search a registry for images", () => import("./search.js")),
  entry("start", "Start one or more stopped containers", () => import("./start.js"), ["container start"]),
  entry("stats", "Display a live stream of container(s) resource usage statistics", () => import("./stats.js"), ["container stats"]),
  entry("stop", "Stop one or more running containers", () => import("./stop.js"), ["container stop"]),
  entry("system df", "Show the engine's disk usage", () => import("./system-df.js")),
  entry("system prune", "Remove unused data", () => import("./system-prune.js")),
  entry("tag", "Create a tag TARGET_IMAGE that refers to SOURCE_IMAGE", () => import("./tag.js"), ["image tag"]),
  entry("top", "Display the running processes of a container", () => import("./top.js"), ["container top"]),
  entry("unpause", "Unpause all processes within one or more containers", () => import("./unpause.js"), ["container unpause"]),
  entry("update", "Update configuration of one or more containers", () => import("./update.js"), ["container update"]),
  entry("version", "Show the engine version information", () => import("./version.js")),
  entry("volume create", "Create a volume", () => import("./volume-create.js")),
  entry("volume inspect", "Display detailed information on one or more volumes", () => import("./volume-inspect.js")),
  entry("volume ls", "List volumes", () => import("./volume-ls.js"), ["volume list"]),
  entry("volume prune", "Remove unused local volumes", () => import("./volume-prune.js")),
  entry("volume rm", "Remove one or more volumes", () => import("./volume-rm.js"), ["volume remove"]),
  entry("wait", "Block until one or more containers stop, then print their exit codes", () => import("./wait.js"), ["container wait"]),
  // what the completion scripts call on each TAB (commands/complete.ts); not in the help
  { ...entry("__complete", "Print the completions of a command line", () => import("./complete.js")), hidden: true },
];

/** The management groups and their line in `engine GROUP`. */
export const GROUPS: Readonly<Record<string, string>> = {
  builder: "Manage builds",
  completion: "Generate the autocompletion script for the specified shell",
  container: "Manage containers",
  context: "Manage contexts",
  image: "Manage images",
  network: "Manage networks",
  system: "Manage the engine",
  volume: "Manage volumes",
};

/** The command `words` start with (two words before one: `network ls`), and how many words it took. */
export function findCommand(words: readonly string[]): { entry: CommandEntry; used: number } | undefined {
  for (const used of [2, 1]) {
    if (words.length < used) continue;
    const name = words.slice(0, used).join(" ");
    const found = commands.find((c) => c.name === name || c.aliases?.includes(name));
    if (found) return { entry: found, used };
  }
  return undefined;
}

/** The commands of a group (`network`, `container`) under their name there, sorted, for `engine GROUP` alone. */
export function groupCommands(group: string): { name: string; entry: CommandEntry }[] {
  const found: { name: string; entry: CommandEntry }[] = [];
  for (const c of commands) {
    // the first name the command has in the group (`container ls`, not its other aliases)
    const name = [c.name, ...(c.aliases ?? [])].find((n) => n.startsWith(`${group} `));
    if (name) found.push({ name: name.slice(group.length + 1), entry: c });
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
