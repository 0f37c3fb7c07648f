/**
 * `--env-file` and `--label-file` as the Docker CLI 28 reads them (its kvfile package): UTF-8
 * lines, a BOM dropped, leading whitespace and `#` comments skipped, `KEY=VALUE` kept as
 * written; a `KEY` alone takes its value from `lookup` (the client's environment for env
 * files), and is left out when there is none.
 */
import { readFileSync } from "node:fs";
import { goTrimLeftSpace } from "../../core/build/go-text.js";

/** An error opening a file, as Go's os.Open words it. */
export function openError(path: string, err: NodeJS.ErrnoException): Error {
  const why: Record<string, string> = { ENOENT: "no such file or directory", EACCES: "permission denied", EISDIR: "is a directory" };
  return new Error(`open ${path}: ${why[err.code ?? ""] ?? err.message}`);
}

function parseLines(data: Buffer, lookup?: (key: string) => string | undefined): string[] {
  const out: string[] = [];
  const raw = data.length ? data.toString("latin1").split("\n") : [];
  if (raw.length && raw[raw.length - 1] === "") raw.pop();
  raw.forEach((latin1, index) => {
    const bytes = Buffer.from(latin1.replace(/\r$/, ""), "latin1");
    let text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    if (Buffer.from(text, "utf8").compare(bytes) !== 0) throw new Error(`invalid utf8 bytes at line ${index + 1}: [${[...bytes].join(" ")}]`);
    if (index === 0) text = text.replace(/^\uFEFF/, "");
    const line = goTrimLeftSpace(text);
    if (line === "" || line.startsWith("#")) return;
    const eq = line.indexOf("=");
    const key = eq < 0 ? line : line.slice(0, eq);
    if (key === "") throw new Error(`no variable name on line '${line}'`);
    if (/[ \t]/.test(key)) throw new Error(`variable '${key}' contains whitespaces`);
    if (eq >= 0) out.push(line);
    else {
      const value = lookup?.(line);
      if (value !== undefined) out.push(`${key}=${value}`);
    }
  });
  return out;
}

/** The entries of a key/value file; an unreadable file is Go's open error, a bad one says which file. */
export function readKeyValueFile(path: string, lookup?: (key: string) => string | undefined): string[] {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw openError(path, e as NodeJS.ErrnoException);
  }
  try {
    return parseLines(data, lookup);
  } catch (e) {
    throw new Error(`invalid env file (${path}): ${(e as Error).message}`);
  }
}

/** An env file: a KEY alone is taken from the client's environment. */
export function readEnvFile(path: string, env: NodeJS.ProcessEnv): string[] {
  return readKeyValueFile(path, (key) => env[key]);
}
