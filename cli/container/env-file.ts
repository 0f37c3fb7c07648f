/** `--env-file` as the Docker CLI reads it (run, create, exec). */
import { readFileSync } from "node:fs";

/** An env file: KEY=VALUE lines, `#` comments, a KEY alone taken from the client's environment. */
export function readEnvFile(path: string, env: NodeJS.ProcessEnv): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === "ENOENT" ? "no such file or directory" : err.code === "EACCES" ? "permission denied" : err.code === "EISDIR" ? "is a directory" : err.message;
    throw new Error(`open ${path}: ${why}`);
  }
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "");
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    const key = eq < 0 ? line : line.slice(0, eq);
    if (key === "") throw new Error(`no variable name on line '${line}'`);
    if (/\s/.test(key)) throw new Error(`variable '${key.trimEnd()}' contains whitespaces`);
    if (eq >= 0) out.push(line);
    else if (env[key] !== undefined) out.push(`${key}=${env[key]}`);
  }
  return out;
}
