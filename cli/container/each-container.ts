/**
 * One request per container named, as `stop`, `kill`, `restart` and `rm` make them: all at once
 * (up to 50 in flight, the Docker CLI's limit), each name printed as given once its request
 * succeeded, in the order given; the failures are handed back for the command to report.
 */
const PARALLEL = 50;

export async function eachContainer(names: readonly string[], op: (name: string) => Promise<void>, printed: (name: string) => void): Promise<Error[]> {
  const results: Promise<Error | undefined>[] = [];
  let active = 0;
  const queue: (() => void)[] = [];
  const slot = () => (active < PARALLEL ? Promise.resolve() : new Promise<void>((r) => queue.push(r)));
  for (const name of names) {
    await slot();
    active++;
    results.push(
      op(name).then(
        () => undefined,
        (e: Error) => e,
      ).finally(() => {
        active--;
        queue.shift()?.();
      }),
    );
  }
  const errors: Error[] = [];
  for (const [i, result] of results.entries()) {
    const err = await result;
    if (err) errors.push(err);
    else printed(names[i]);
  }
  return errors;
}

/** The request's body drained: these endpoints answer 204 or a short JSON. */
export const drain = (res: { body: NodeJS.ReadableStream }): void => void res.body.resume();
