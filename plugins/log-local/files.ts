/**
 * Why this file: the writer and the reader must agree on where the files are, as Docker's
 * `local` driver keeps them: `<container folder>/local-logs/container.log`, rotated
 * `container.log.N` (gzipped: `container.log.N.gz`), N = 1 the newest. The folder is 0700 and
 * the files 0640, Docker's modes.
 */
import { join } from "node:path";

const LOG_FOLDER = "local-logs";
export const LOG_FILE = "container.log";
export const FOLDER_MODE = 0o700;
export const FILE_MODE = 0o640;

export function logFolder(containerDir: string): string {
  return join(containerDir, LOG_FOLDER);
}

export function logPath(containerDir: string): string {
  return join(containerDir, LOG_FOLDER, LOG_FILE);
}
