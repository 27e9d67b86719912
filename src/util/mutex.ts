/** Serialises async critical sections (block import, reorg, reward credit) in arrival order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every previously queued section has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
