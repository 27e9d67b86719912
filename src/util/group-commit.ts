/**
 * Group commit: durable writes that concurrent callers share. Each caller's operations are queued
 * in call order and written by one flush loop, one batch at a time; everything queued while a
 * batch is being written (synced) goes into the next one. The cost of a sync is thus spread over
 * every caller waiting for it, so durability before acknowledgement does not cap throughput at
 * the disk's sync rate, and operations queued later never land before ones queued earlier.
 */
export class GroupCommit<Op> {
  private pending: Op[] = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  /** The running flush loop, while one runs. */
  private flushing: Promise<void> | undefined;

  constructor(
    /** Writes one batch atomically and durably (e.g. a LevelDB batch with sync). */
    private readonly write: (ops: Op[]) => Promise<void>,
    /** Called after each written batch with the number of callers it carried (for metrics). */
    private readonly written: (callers: number) => void = () => undefined,
  ) {}

  /** Queues `ops` behind everything queued before; resolves once the batch holding them is written. */
  submit(ops: readonly Op[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      for (const op of ops) this.pending.push(op);
      this.waiters.push({ resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /**
   * Queues `ops` behind everything queued before without waiting for them or starting a batch:
   * they ride with the next batch a `submit` (or `drain`) starts, in call order. For writes whose
   * loss in a crash is harmless, so they never cost a sync of their own.
   */
  defer(ops: readonly Op[]): void {
    for (const op of ops) this.pending.push(op);
  }

  /** Whether deferred operations wait for a batch. */
  get hasDeferred(): boolean {
    return this.pending.length > 0 && this.waiters.length === 0;
  }

  /** Resolves once every queued batch, and every deferred operation, has been attempted (before closing the store). */
  async drain(): Promise<void> {
    // An empty caller carries deferred operations into a batch; its failure is the batch's callers' to see.
    if (this.hasDeferred) this.submit([]).catch(() => undefined);
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    // Yield once so the submissions of the current event-loop turn share the first batch.
    await new Promise<void>((r) => setImmediate(r));
    while (this.waiters.length > 0) {
      const ops = this.pending;
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      try {
        await this.write(ops);
        this.written(waiters.length);
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    }
    this.flushing = undefined;
  }
}
