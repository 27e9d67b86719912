/**
 * Lets high-priority work (engine calls: block import, forkchoiceUpdated) run without
 * low-priority work (public lookups) interleaving on the same event loop. Every server of a node
 * shares one JavaScript thread, so a second port alone isolates nothing: while high-priority work
 * is in flight, low-priority callers wait, then resume a few at a time so that an engine call
 * arriving meanwhile is not queued behind all of them. A wait never exceeds `maxDeferMs`, so
 * lookups are delayed, never starved.
 */

/** Waiters resumed per event-loop turn once the gate is idle. */
const RESUME_PER_TURN = 16;

export class PriorityGate {
  private active = 0;
  private readonly waiters: Array<{ resume: () => void; timer: NodeJS.Timeout }> = [];
  private draining = false;
  /** Low-priority calls that had to wait, since start. */
  deferred = 0;

  constructor(private readonly maxDeferMs: number) {}

  /** Marks high-priority work as started; pair with `leave`. */
  enter(): void {
    this.active++;
  }

  /** Marks high-priority work as finished. */
  leave(): void {
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) this.drain();
  }

  /** Resolves at once when no high-priority work is in flight or queued callers are ahead, else when it is this caller's turn. */
  idle(): Promise<void> {
    if (this.active === 0 && this.waiters.length === 0) return Promise.resolve();
    this.deferred++;
    return new Promise((resolve) => {
      const waiter = {
        resume: resolve,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve();
        }, this.maxDeferMs),
      };
      this.waiters.push(waiter);
      if (this.active === 0) this.drain();
    });
  }

  // setImmediate runs after the poll phase, so an engine request that arrived is read (and
  // enters the gate) before the next batch of waiters resumes.
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    const step = (): void => {
      if (this.active > 0 || this.waiters.length === 0) {
        this.draining = false;
        return;
      }
      for (const w of this.waiters.splice(0, RESUME_PER_TURN)) {
        clearTimeout(w.timer);
        w.resume();
      }
      setImmediate(step);
    };
    setImmediate(step);
  }
}
