/** Token-bucket rate limits per key (client IP, sender address). */
import { SvcError } from '../../../core/errors.js';

/** A client or sender over its rate limit (HTTP 429). */
export class RateLimitError extends SvcError {
  constructor(message: string) {
    super('RATE_LIMITED', message);
  }
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /** `perSecond` sustained, bursts up to `burst`; `perSecond` 0 disables the limit. */
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly what: string,
  ) {}

  /** Takes one token for `key` or throws 429 RATE_LIMITED. */
  take(key: string, now = Date.now()): void {
    if (this.perSecond <= 0) return;
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      throw new RateLimitError(`rate limit exceeded for ${this.what} ${key}: at most ${this.perSecond} per second`);
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > 100_000) this.prune(now);
  }

  // Full buckets carry no information; dropping them bounds memory under address spraying.
  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(k);
  }
}
