/**
 * What a build says, as Docker's classic builder says it: one JSON object per line,
 * `{"stream":"Step 1/3 : FROM busybox"}`, `{"stream":" ---> 5f3c9a1b2c3d\n"}`, the RUN
 * container's output (its stderr wrapped in the red of `\u001b[91m` ... `\u001b[0m`),
 * `{"aux":{"ID":"sha256:..."}}` and `Successfully built` / `Successfully tagged` at the end.
 *
 * With `q` (quiet) Docker keeps all of that to itself: a build that succeeds says only its image
 * ID (`{"stream":"sha256:...\n"}`), one that fails says everything it kept and then its error,
 * so that the user sees why.
 */
import type { Emit, ProgressMessage } from "../images/progress.js";

export class BuildOutput {
  private readonly kept: ProgressMessage[] = [];

  constructor(
    private readonly emit: Emit,
    private readonly quiet: boolean,
    /** Resolves once the client has room for more (a RUN container's output waits for it). */
    readonly ready: () => Promise<void> = async () => {},
  ) {}

  /** Text for the client's terminal; sent as is (Docker sends a step's title and its newline apart). */
  stream(text: string): void {
    this.send({ stream: text });
  }

  /** A step's title: `Step 2/5 : RUN make`, then its newline on a line of its own, as Docker sends it. */
  step(n: number, total: number, original: string): void {
    this.stream(`Step ${n}/${total} : ${original}`);
    this.stream("\n");
  }

  /** ` ---> <short id>` under a step. */
  arrow(text: string): void {
    this.stream(` ---> ${text}\n`);
  }

  /** A RUN container's stderr: red, as Docker's builder colours it. */
  stderr(text: string): void {
    this.stream(`\u001b[91m${text}\u001b[0m`);
  }

  /** A message of another kind (a base image's pull progress, a stage's `aux`): kept back when quiet too. */
  progress(m: ProgressMessage): void {
    this.send(m);
  }

  /** The Dockerfile's warnings (empty continuation lines), before the first step: one red message, as Docker sends them. */
  parserWarnings(list: readonly string[]): void {
    if (list.length > 0) this.stream(`\u001b[91m${list.join("\n")}\n\u001b[0m`);
  }

  /** A warning line (`[Warning] ...`), sent as the stream's text. */
  warning(text: string): void {
    this.stream(`[Warning] ${text}\n`);
  }

  /** The end of a good build: the image ID, then the tags. */
  built(imageId: string, tags: readonly string[]): void {
    if (this.quiet) {
      this.emit({ stream: `${imageId}\n` });
      return;
    }
    this.stream(`Successfully built ${imageId.slice(7, 19)}\n`);
    for (const tag of tags) this.stream(`Successfully tagged ${tag}\n`);
  }

  /** A failed build, quiet: what was kept goes out first (the error line itself is the stream's). */
  failed(): void {
    for (const m of this.kept.splice(0)) this.emit(m);
  }

  private send(m: ProgressMessage): void {
    if (this.quiet) this.kept.push(m);
    else this.emit(m);
  }
}
