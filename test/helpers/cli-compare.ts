/**
 * Running a command line through both clients against one daemon and comparing what the user
 * sees: stdout, stderr and the exit status. The program's own name (`docker` / `engine`) is the
 * only difference let through, and 64-hex ids are made alike where a command creates something
 * (each client makes its own). Relative times move between two runs: `same` runs the Docker CLI,
 * then engine, then the Docker CLI again, and engine's result must equal one of the two.
 */
import { expect } from "chai";
import { docker } from "./docker-cli.js";
import { engine, type EngineRunOptions } from "./engine-cli.js";
import type { RunResult } from "./engined.js";

export interface Normalized {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The user-visible result with the program's name and 64-hex ids made alike. */
export function normalized(r: RunResult, extra: (text: string) => string = (t) => t): Normalized {
  const n = (t: string) =>
    extra(
      t
        .replace(/\bdocker\b/g, "engine")
        .replace(/\bDocker\b/g, "engine")
        .replace(/\b[0-9a-f]{64}\b/g, "<id>"),
    );
  return { code: r.code, stdout: n(r.stdout), stderr: n(r.stderr) };
}

export interface Comparer {
  /** engine's result for `args`, checked equal to the Docker CLI's. */
  same(...args: string[]): Promise<RunResult>;
  /** The same with stdin (both clients get it) or other run options. */
  sameWith(opts: EngineRunOptions, ...args: string[]): Promise<RunResult>;
}

export function comparer(host: () => string, extra?: (text: string) => string): Comparer {
  const sameWith = async (opts: EngineRunOptions, ...args: string[]): Promise<RunResult> => {
    let last: { e: RunResult; d: RunResult } | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const d1 = await docker(host(), args, opts.env, { input: opts.input });
      const e = await engine(host(), args, opts);
      const d2 = await docker(host(), args, opts.env, { input: opts.input });
      // a second sample is for output that moves with the clock ("2 seconds ago"), never for a daemon that shed a request
      for (const r of [d1, e, d2]) expect(r.stderr, `${args.join(" ")}: the daemon shed a request`).to.not.match(/Service Unavailable|\b503\b/);
      const ne = JSON.stringify(normalized(e, extra));
      if (ne === JSON.stringify(normalized(d1, extra)) || ne === JSON.stringify(normalized(d2, extra))) return e;
      last = { e, d: d2 };
    }
    expect(normalized(last!.e, extra), `engine ${args.join(" ")}`).to.deep.equal(normalized(last!.d, extra));
    return last!.e;
  };
  return { same: (...args) => sameWith({}, ...args), sameWith };
}
