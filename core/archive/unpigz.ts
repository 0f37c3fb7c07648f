/**
 * `unpigz`: where it is, how it is run, and processes of it started ahead of the layers that
 * will use them.
 *
 * Node's `spawn` blocks the event loop until the child has called exec: a fork of the whole
 * daemon, then a wait for the child to get a core. In a small idle Node process that is ~7 ms;
 * once a pull's downloads are under way it measured 20-60 ms for each layer's `unpigz`, and
 * every download and request of the daemon stood still meanwhile. With spares kept ready the 210 MB
 * pull of bench/pull.mjs went from ~138 to ~150 MB/s (2.2-2.3 times Docker's daemon).
 *
 * The daemon says how many to keep (`keep(n)`: the downloads a pull runs at once, plus one).
 * They are started a moment later, and again after layers have taken some, only while no
 * decompression through `unpigz` is under way (`busy()`), so that refilling never stalls a
 * pull. A spare waits, blocked on its empty stdin, until a layer takes it (`take()`); one that
 * is no longer wanted is killed. Each costs a process of 2 MB resident, 150 kB of it its own
 * (the rest is the C library and zlib, shared); bench/startup.mjs's idle RSS of the daemon and
 * its children went from ~100 to ~108 MiB with four.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { startCommand, type StartedCommand } from "./decoders.js";

let unpigzPath: string | null | undefined;

/** Where `unpigz` is on PATH, or null; looked up once. */
export function findUnpigz(): string | null {
  if (unpigzPath !== undefined) return unpigzPath;
  unpigzPath = null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, "unpigz"), constants.X_OK);
      unpigzPath = join(dir, "unpigz");
      break;
    } catch {
      // not here
    }
  }
  return unpigzPath;
}

/**
 * Starts `unpigz` (on PATH: findUnpigz). One thread: pigz decompresses in one anyway, and its
 * helper threads (read, write, check) only contend with the daemon for the cores (measured:
 * half the time with -p 1 on 2 cores); 2 is pigz's "warning" status (trailing junk after the
 * last member), which zlib ignores too.
 */
export function startUnpigz(path: string): Promise<StartedCommand> {
  return startCommand(path, ["-d", "-c", "-p", "1"], [0, 2]);
}

interface Spare {
  started: Promise<StartedCommand>;
  /** Set once it has started. */
  command?: StartedCommand;
}

/** How long after the last decompression ended (or after `keep`) the spares are started. */
const REFILL_DELAY_MS = 100;

export class UnpigzSpares {
  private readonly spares: Spare[] = [];
  private wanted = 0;
  private active = 0;
  private timer: NodeJS.Timeout | undefined;
  private filling = false;

  /** Keeps `n` spares from now on (0: none; those there are killed). */
  keep(n: number): void {
    this.wanted = Math.max(0, n);
    while (this.spares.length > this.wanted) drop(this.spares.pop()!);
    this.refillLater();
  }

  /** A started `unpigz` that still runs, if one is ready (the caller binds it, or drops it). */
  take(): StartedCommand | undefined {
    for (let i = 0; i < this.spares.length; i++) {
      const { command } = this.spares[i];
      if (!command) continue; // (still starting)
      this.spares.splice(i--, 1);
      this.refillLater();
      if (command.running()) return command;
      command.drop(); // (ended while it waited: killed from outside)
    }
    return undefined;
  }

  /** A decompression through `unpigz` starts; the returned function says it has ended. */
  busy(): () => void {
    this.active++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active--;
      this.refillLater();
    };
  }

  private refillLater(): void {
    if (this.timer || this.filling || this.spares.length >= this.wanted) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refill();
    }, REFILL_DELAY_MS);
    this.timer.unref();
  }

  /** One at a time, each when no decompression runs: a spawn blocks the event loop. */
  private async refill(): Promise<void> {
    const unpigz = findUnpigz();
    if (!unpigz) return;
    this.filling = true;
    try {
      while (this.active === 0 && this.spares.length < this.wanted) {
        const spare: Spare = { started: startUnpigz(unpigz) };
        this.spares.push(spare);
        try {
          spare.command = await spare.started;
        } catch {
          // (a socket pair that could not be made: not kept, and not tried again until later)
          this.spares.splice(this.spares.indexOf(spare), 1);
          break;
        }
        if (!this.spares.includes(spare)) spare.command.drop(); // (no longer wanted meanwhile)
      }
    } finally {
      this.filling = false;
    }
    // a decompression started meanwhile: the rest once it has ended (busy's release calls back)
  }
}

function drop(spare: Spare): void {
  void spare.started.then((s) => s.drop(), () => undefined);
}

/** The daemon's spares (one set per process: the processes are this process's children). */
export const unpigzSpares = new UnpigzSpares();
