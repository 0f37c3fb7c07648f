/**
 * Work run one piece at a time per key, in the order it was asked for: a container's start, exit
 * and removal; a network's or a volume's choice of name and address and the save that makes it
 * visible. A failure is its caller's and does not stop the pieces after it. A key's entry goes
 * once its queue is empty, so keys that come and go (container ids) leave nothing behind.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const next = before.then(fn);
    const tail = next.then(
      () => {},
      () => {},
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
