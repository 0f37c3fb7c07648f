/**
 * The build's `ARG`s, by Docker's classic rules:
 * - a value given with the build (`buildargs`, `--build-arg`) wins over an `ARG`'s default; a
 *   given name with no value (null) counts as not given;
 * - `ARG`s before the first `FROM` (meta args) are seen only by `FROM` lines, and by a stage
 *   that declares the name again (`ARG NAME` without a default then takes the meta value);
 * - inside a stage only declared names are seen, from their `ARG` on; `ENV` wins over an `ARG`
 *   of the same name;
 * - the proxy variables (HTTP_PROXY and the others) need no `ARG`: given, they reach `RUN`'s
 *   environment but stay out of the image's history unless the Dockerfile declares them;
 * - a given name that no `ARG` ever declared is reported at the end of the build.
 */

const PREDEFINED_ARGS: readonly string[] = [
  "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "FTP_PROXY", "ftp_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy",
];

const envKey = (kv: string) => kv.split("=")[0];

export class BuildArgs {
  private readonly meta = new Map<string, string | undefined>();
  private readonly declaredEver = new Set<string>();

  constructor(private readonly given: Readonly<Record<string, string | null>>) {}

  private givenValue(name: string): string | undefined {
    const v = this.given[name];
    return v === null || v === undefined ? undefined : v;
  }

  /** An `ARG` before the first `FROM`. */
  declareMeta(name: string, defaultValue: string | undefined): void {
    this.declaredEver.add(name);
    this.meta.set(name, this.givenValue(name) ?? defaultValue);
  }

  /** What `FROM` lines may substitute. */
  metaLookup(name: string): string | undefined {
    return this.meta.get(name);
  }

  /** The args of a new stage: none declared yet. */
  stage(): StageArgs {
    return new StageArgs(this);
  }

  /** @internal the value an `ARG` in a stage gets. */
  resolve(name: string, defaultValue: string | undefined): string | undefined {
    this.declaredEver.add(name);
    return this.givenValue(name) ?? defaultValue ?? this.meta.get(name);
  }

  /** @internal the proxy variables given with the build. */
  givenPredefined(): [string, string][] {
    return PREDEFINED_ARGS.flatMap((k) => {
      const v = this.givenValue(k);
      return v === undefined ? [] : [[k, v] as [string, string]];
    });
  }

  /** Given names no `ARG` declared (proxy variables aside), sorted: Docker's end-of-build warning lists them. */
  unused(): string[] {
    return Object.keys(this.given).filter((k) => !this.declaredEver.has(k) && !PREDEFINED_ARGS.includes(k)).sort();
  }
}

/** The `ARG`s a stage has declared so far, with their values. */
export class StageArgs {
  private readonly declared = new Map<string, string | undefined>();

  constructor(private readonly all: BuildArgs) {}

  declare(name: string, defaultValue: string | undefined): void {
    this.declared.set(name, this.all.resolve(name, defaultValue));
  }

  /** Declared names with a value, as `NAME=value`, for names `env` does not set; sorted. */
  private withValues(env: readonly string[], includePredefined: boolean): string[] {
    const set = new Set(env.map(envKey));
    const out = new Map<string, string>();
    if (includePredefined) for (const [k, v] of this.all.givenPredefined()) out.set(k, v);
    for (const [k, v] of this.declared) if (v !== undefined) out.set(k, v);
    return [...out].filter(([k]) => !set.has(k)).map(([k, v]) => `${k}=${v}`).sort();
  }

  /** What a `RUN` adds to the environment: declared args and given proxy variables that `env` does not set. */
  runEnv(env: readonly string[]): string[] {
    return this.withValues(env, true);
  }

  /** What a `RUN`'s history entry shows of them (`|2 A=1 B=2 /bin/sh -c ...`): proxy variables only when declared. */
  historyEnv(env: readonly string[]): string[] {
    const declared = new Set(this.declared.keys());
    return this.runEnv(env).filter((kv) => !PREDEFINED_ARGS.includes(envKey(kv)) || declared.has(envKey(kv)));
  }

  /** Substitution: the environment first, then the declared args. */
  lookup(env: readonly string[]): (name: string) => string | undefined {
    const vars = new Map<string, string>();
    for (const kv of this.withValues(env, false)) vars.set(envKey(kv), kv.slice(envKey(kv).length + 1));
    for (const kv of env) {
      const k = envKey(kv);
      vars.set(k, kv.includes("=") ? kv.slice(k.length + 1) : "");
    }
    return (name) => vars.get(name);
  }
}
