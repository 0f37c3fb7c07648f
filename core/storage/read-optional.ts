/**
 * A driver's small metadata files (a layer's `parent`, `link`, `lower`, `quota`): read and
 * trimmed, or undefined when the file is not there (a base layer has no parent).
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** `readOptional`, at once (see OverlayLayout.create for why a driver may want it so). */
export function readOptionalSync(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
