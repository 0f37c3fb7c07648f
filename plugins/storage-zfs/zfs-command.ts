/**
 * Running the `zfs` and `zpool` commands (zfsutils) as Docker's zfs driver does through
 * go-zfs: one process per operation, scripted output (`-H`: no header, tab-separated;
 * `-p`: exact numbers). A failure carries the command's own message (its stderr), which the
 * driver passes on: `cannot destroy 'tank/engine/base': filesystem has dependent clones`.
 */
import { execFile } from "node:child_process";

export class ZfsCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    /** What the command printed on stderr, trimmed: the reason. */
    readonly stderr: string,
    readonly code: number | string | undefined,
  ) {
    super(stderr || `${args.join(" ")} failed (exit ${code})`);
  }
}

/** Values of one dataset's properties, by property name; `-` where a property is unset. */
export type PropertyRow = Record<string, string>;

export class ZfsCommand {
  constructor(
    /** The zfs command: `zfs` from PATH, or the test suite's fake. */
    readonly zfsPath = "zfs",
    readonly zpoolPath = "zpool",
  ) {}

  /** Runs `zfs <args>`; resolves with its stdout, rejects with a ZfsCommandError. */
  zfs(args: readonly string[]): Promise<string> {
    return this.exec(this.zfsPath, args);
  }

  zpool(args: readonly string[]): Promise<string> {
    return this.exec(this.zpoolPath, args);
  }

  private exec(command: string, args: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      // The C locale: the messages are parsed ("dataset does not exist") and shown as they are.
      const env = { ...process.env, LC_ALL: "C" };
      execFile(command, args, { env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const code = (err as NodeJS.ErrnoException).code;
        const text = String(stderr).trim() || (code === "ENOENT" ? `${command}: command not found` : err.message);
        reject(new ZfsCommandError([command, ...args], text, code));
      });
    });
  }

  /**
   * `zfs list -H -p -o <fields> [-t type] [-d depth] <name>`: one row per dataset, the named
   * dataset first. User properties (`com.engine:layer`) may be among the fields.
   */
  async list(name: string, fields: readonly string[], opts: { type?: string; depth?: number } = {}): Promise<PropertyRow[]> {
    const args = ["list", "-H", "-p", "-o", fields.join(",")];
    if (opts.type) args.push("-t", opts.type);
    if (opts.depth !== undefined) args.push("-d", String(opts.depth));
    const out = await this.zfs([...args, name]);
    return out
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const values = line.split("\t");
        return Object.fromEntries(fields.map((f, i) => [f, values[i] ?? "-"]));
      });
  }
}

/** Whether a failure says that the dataset (or snapshot) named is not there. */
export function saysMissing(err: unknown): boolean {
  return err instanceof ZfsCommandError && /dataset does not exist|could not find any snapshots to destroy/.test(err.stderr);
}
