/**
 * Dual logging, as Docker 20.10+ does it: a log driver that cannot read back what it stored
 * (syslog, journald, ...) is given a local cache, so that `docker logs` still works. Every
 * message goes to the driver and then to a readable cache driver that keeps it in the
 * container's folder; `docker logs` reads the cache.
 *
 * Options (Docker's `cache-*`, taken off before the driver sees the options):
 * - `cache-disabled`: a boolean (Go's ParseBool); true means no cache, and `docker logs`
 *   answers that the driver does not support reading. Another value is refused at create with
 *   Docker's message, `invalid value for option cache-disabled: <value>`.
 * - `cache-max-size`, `cache-max-file`, `cache-compress`: the cache's rotation (defaults 20m,
 *   5, true: the local driver's). Docker accepts any value for them without a check; so does
 *   this wrapper, and a value that does not parse leaves the default.
 *
 * The cache driver is `CACHE_DRIVER`. Docker's cache is the `local` driver's format in
 * `<container>/container-cached.log`; this one is the json-file driver in
 * `<container>/container-cached/` (a folder of its own, so that log shippers that collect
 * `<id>-json.log` files do not take a syslog container's output twice), until the `local`
 * driver can be told a file of the daemon's choosing.
 */
import { join } from "node:path";
import type { LogDriver, LoggerContext, LogMessageIn, LogWriter } from "../../core/contracts/log.js";
import { errors } from "../../core/errors.js";
import { parseBytes } from "../../core/options/value-types-structured.js";

export const CACHE_DRIVER = "json-file";
const CACHE_DIR = "container-cached";

const CACHE_KEYS = ["cache-disabled", "cache-max-size", "cache-max-file", "cache-compress"];
const TRUE = ["1", "t", "T", "TRUE", "true", "True"];
const FALSE = ["0", "f", "F", "FALSE", "false", "False"];

/** The options without the `cache-*` ones: what the driver itself is given. */
function withoutCacheOptions(options: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(options).filter(([k]) => !CACHE_KEYS.includes(k)));
}

/** Docker's check of the cache options (only `cache-disabled` is checked). */
function validateCacheOptions(options: Record<string, string>): void {
  const v = options["cache-disabled"];
  if (v !== undefined && v !== "" && !TRUE.includes(v) && !FALSE.includes(v)) {
    throw new Error(`invalid value for option cache-disabled: ${v}`);
  }
}

function cacheEnabled(options: Record<string, string>): boolean {
  return !TRUE.includes(options["cache-disabled"] ?? "");
}

/** The cache's own options, in the cache driver's words; a value that does not parse keeps the default. */
function cacheOptions(options: Record<string, string>): Record<string, string> {
  let maxSize = "20m";
  let maxFile = 5;
  let compress = true;
  const size = options["cache-max-size"];
  if (size !== undefined) {
    try {
      if (parseBytes(size) > 0) maxSize = size;
    } catch {
      // Docker takes it without a check; the default stays
    }
  }
  const files = options["cache-max-file"];
  if (files !== undefined && /^\d+$/.test(files) && Number(files) >= 1) maxFile = Number(files);
  const comp = options["cache-compress"];
  if (comp !== undefined && (TRUE.includes(comp) || FALSE.includes(comp))) compress = TRUE.includes(comp);
  return { "max-size": maxSize, "max-file": String(maxFile), ...(compress && maxFile >= 2 ? { compress: "true" } : {}) };
}

/** What the cache driver is given for this container: its folder and its options. */
function cacheContext(ctx: LoggerContext): LoggerContext {
  return { ...ctx, logDir: join(ctx.logDir, CACHE_DIR), options: cacheOptions(ctx.options) };
}

/** Writes each message to the driver, then to the cache; closes both. */
class TeeWriter implements LogWriter {
  readonly closed: Promise<void>;
  private closing?: Promise<void>;
  private reported = false;

  constructor(
    private readonly main: LogWriter,
    private readonly cache: LogWriter,
    private readonly containerId: string,
  ) {
    this.closed = Promise.all([main.closed, cache.closed]).then(() => {});
  }

  async write(msg: LogMessageIn): Promise<void> {
    try {
      await this.main.write(msg);
    } catch (err) {
      // Docker's copier reports a failed message and goes on with the next; the drain would stop.
      if (!this.reported) process.stderr.write(`log driver of container ${this.containerId}: ${(err as Error).message}\n`);
      this.reported = true;
    }
    await this.cache.write(msg);
  }

  close(): Promise<void> {
    this.closing ??= this.main
      .close()
      .catch(() => {})
      .then(() => this.cache.close());
    return this.closing;
  }
}

/**
 * The driver as the daemon uses it: its own checks after Docker's cache checks; a logger that
 * also feeds the cache (unless `cache-disabled`); a reader of the cache.
 */
export function withLocalCache(driver: LogDriver, cacheDriver: () => Promise<LogDriver>): LogDriver {
  return {
    name: driver.name,
    capabilities: ["read"],
    validateOptions(options) {
      validateCacheOptions(options);
      driver.validateOptions(withoutCacheOptions(options));
    },
    async createLogger(ctx, resume) {
      validateCacheOptions(ctx.options);
      // Two loggers have no one mark: with the cache, delivery after a crash is at least once.
      const alone = !cacheEnabled(ctx.options);
      const main = await driver.createLogger({ ...ctx, options: withoutCacheOptions(ctx.options) }, alone ? resume : undefined);
      if (alone) return main;
      try {
        const cache = await (await cacheDriver()).createLogger(cacheContext(ctx));
        return new TeeWriter(main, cache, ctx.containerId);
      } catch (err) {
        await main.close().catch(() => {});
        throw new Error(`error initializing local log cache driver: ${(err as Error).message}`);
      }
    },
    createReader(ctx) {
      if (!cacheEnabled(ctx.options)) throw errors.containerLogsUnreadable();
      const cache = cacheDriver();
      const reader = cache.then((d) => d.createReader!(cacheContext(ctx)));
      return {
        async *read(opts) {
          yield* (await reader).read(opts);
        },
      };
    },
  };
}
