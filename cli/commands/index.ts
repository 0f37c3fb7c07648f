/**
 * Every command of `engine`: its name, its line in the help, and where its code is. A command's
 * file is imported only when it runs. A new command is a file and a line here.
 */
import type { Command, CommandEntry } from "../command.js";

const entry = (name: string, description: string, load: () => Promise<{ command: Command }>, aliases?: string[]): CommandEntry => ({
  name,
  description,
  aliases,
  load: async () => (await load()).command,
});

export const commands: readonly CommandEntry[] = [
  entry("attach", "Attach the terminal's input and output to a running container", () => import("./attach.js"), ["container attach"]),
  entry("build", "Build an image from a Dockerfile", () => import("./build.js"), ["image build", "builder build"]),
  entry("commit", "Create a new image from a container's changes", () => import("./commit.js"), ["container commit"]),
  entry("create", "Create a new container", () => import("./create.js"), ["container create"]),
  entry("images", "List images", () => import("./images.js"), ["image ls", "image list"]),
  entry("import", "Import a tarball's contents as a filesystem image", () => import("./import.js"), ["image import"]),
  entry("info", "Display system-wide information", () => import("./info.js"), ["system info"]),
  entry("inspect", "Return low-level information on containers, images and networks", () => import("./inspect.js")),
  entry("kill", "Kill one or more running containers", () => import("./kill.js"), ["container kill"]),
  entry("load", "Load images from a tar archive or standard input", () => import("./load.js"), ["image load"]),
  entry("login", "Log in to a registry", () => import("./login.js")),
  entry("logout", "Log out from a registry", () => import("./logout.js")),
  entry("logs", "Fetch the logs of a container", () => import("./logs.js"), ["container logs"]),
  entry("network create", "Create a network", () => import("./network-create.js")),
  entry("network inspect", "Display detailed information on one or more networks", () => import("./network-inspect.js")),
  entry("network ls", "List networks", () => import("./network-ls.js"), ["network list"]),
  entry("network rm", "Remove one or more networks", () => import("./network-rm.js"), ["network remove"]),
  entry("ps", "List containers", () => import("./ps.js"), ["container ls", "container list", "container ps"]),
  entry("pull", "Download an image from a registry", () => import("./pull.js"), ["image pull"]),
  entry("push", "Upload an image to a registry", () => import("./push.js"), ["image push"]),
  entry("restart", "Restart one or more containers", () => import("./restart.js"), ["container restart"]),
  entry("rm", "Remove one or more containers", () => import("./rm.js"), ["container rm", "container remove"]),
  entry("rmi", "Remove one or more images", () => import("./rmi.js"), ["image rm", "image remove"]),
  entry("run", "Create and run a new container from an image", () => import("./run.js"), ["container run"]),
  entry("save", "Save one or more images to a tar archive (to standard output by default)", () => import("./save.js"), ["image save"]),
  entry("start", "Start one or more stopped containers", () => import("./start.js"), ["container start"]),
  entry("stop", "Stop one or more running containers", () => import("./stop.js"), ["container stop"]),
  entry("system df", "Show the engine's disk usage", () => import("./system-df.js")),
  entry("system prune", "Remove unused data", () => import("./system-prune.js")),
  entry("tag", "Create a tag TARGET_IMAGE that refers to SOURCE_IMAGE", () => import("./tag.js"), ["image tag"]),
  entry("version", "Show the engine version information", () => import("./version.js")),
  entry("wait", "Block until one or more containers stop, then print their exit codes", () => import("./wait.js"), ["container wait"]),
];

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

/** The commands of a group (`network`), for `engine network` alone. */
export function groupCommands(group: string): CommandEntry[] {
  return commands.filter((c) => c.name.startsWith(`${group} `) || c.aliases?.some((a) => a.startsWith(`${group} `)));
}
