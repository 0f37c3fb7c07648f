/** Looking a command up on PATH the way a shell does, without running it. */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The first executable `name` in the folders of `pathEnv` (PATH by default), or undefined. */
export function findOnPath(name: string, pathEnv: string = process.env.PATH ?? ""): string | undefined {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}
