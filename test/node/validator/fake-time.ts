/**
 * A clock and timers for the validator client that move only when a test says (not a test file
 * itself): each slot phase then runs exactly when the test advances to it, and `client.idle()`
 * tells when its work (HTTP exchanges included) is over, so nothing sleeps.
 */
import type { Timers, ValidatorClient } from '../../../src/node/validator/client.js';

/** A clock and timers that move only when the test says. */
export class FakeTime {
  now: number;
  private queue: Array<{ at: number; id: number; fn: () => void }> = [];
  private ids = 0;
  readonly clock = () => this.now;
  readonly timers: Timers = {
    setTimeout: (fn, ms) => {
      const t = { at: this.now + ms, id: ++this.ids, fn };
      this.queue.push(t);
      return t;
    },
    clearTimeout: (h) => {
      this.queue = this.queue.filter((t) => t !== h);
    },
  };

  constructor(now: number) {
    this.now = now;
  }

  /** Fires the earliest timer due at or before `t` (moving the clock to it); false when none is. */
  private fireNext(t: number): boolean {
    const due = this.queue.filter((x) => x.at <= t).sort((a, b) => a.at - b.at || a.id - b.id)[0];
    if (!due) return false;
    this.queue = this.queue.filter((x) => x !== due);
    this.now = Math.max(this.now, due.at);
    due.fn();
    return true;
  }

  /**
   * Moves the clock to `t` and fires the timers due, without waiting for the work they start
   * (to watch two pieces of work overlap; the test then waits on what the fake beacon records).
   */
  fireUpTo(t: number): void {
    while (this.fireNext(t));
    this.now = Math.max(this.now, t);
  }

  /** Fires every timer due up to `t` in order, letting the client finish each phase's work. */
  async advanceTo(t: number, client: ValidatorClient): Promise<void> {
    while (this.fireNext(t)) await client.idle();
    this.now = Math.max(this.now, t);
    await client.idle();
  }
}
