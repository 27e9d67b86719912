/** The beacon's client for the execution engine API (loopback, or HS256 JWT when a secret is set). */
import { SvcError } from '../../core/errors.js';
import type { BlockJson } from '../../core/types/block.js';
import type { RegistryEntry } from '../execution/registry.js';
import type { ImportResult } from '../execution/chain.js';
import { signEngineJwt } from '../execution/api/jwt.js';

/** Execution answered with an error envelope: `code` and `message` are execution's. */
export class EngineError extends SvcError {}

const TIMEOUT_MS = 30_000;

export class EngineClient {
  constructor(
    readonly baseUrl: string,
    private readonly jwtSecret?: Uint8Array,
  ) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.jwtSecret) headers.authorization = `Bearer ${signEngineJwt(this.jwtSecret)}`;
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      throw new EngineError('EXECUTION_UNREACHABLE', `execution engine at ${this.baseUrl} is unreachable: ${(err as Error).message}`, 503);
    }
    const json = (await res.json().catch(() => undefined)) as { success?: boolean; data?: T; error?: { code: string; message: string } } | undefined;
    if (!json || json.success !== true) {
      const e = json?.error;
      throw new EngineError(e?.code ?? 'EXECUTION_ERROR', e?.message ?? `execution answered HTTP ${res.status}`, res.status >= 500 ? 502 : 400);
    }
    return json.data as T;
  }

  /** Validates and applies a block (execution re-verifies everything). */
  newPayload(block: BlockJson): Promise<ImportResult> {
    return this.call('POST', '/api/v1/engine/newPayload', block);
  }

  /** Makes `head` canonical and records `finalized`. */
  forkchoiceUpdated(head: string, finalized: string): Promise<unknown> {
    return this.call('POST', '/api/v1/engine/forkchoiceUpdated', { head_block_hash: head, finalized_block_hash: finalized });
  }

  /** Pays an epoch's rewards (idempotent per epoch on execution's side). */
  creditRewards(body: { epoch: number; credits: Array<{ address: string; amount: string }> }): Promise<{ epoch: number; acknowledged: true; already_applied: boolean }> {
    return this.call('POST', '/api/v1/engine/creditRewards', body);
  }

  /**
   * Waits until execution answers (a beacon and its execution node are often started together):
   * retries an unreachable engine every 250 ms until `timeoutMs`, then throws the last error.
   */
  async waitUntilReachable(timeoutMs: number, onWaiting: () => void): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let first = true; ; first = false) {
      try {
        await this.registry();
        return;
      } catch (err) {
        if (!(err instanceof EngineError) || err.code !== 'EXECUTION_UNREACHABLE' || Date.now() > deadline) throw err;
        if (first) onWaiting();
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Execution's validator registry (genesis plus deposits and exits). */
  async registry(): Promise<RegistryEntry[]> {
    return (await this.call<{ validators: RegistryEntry[] }>('GET', '/api/v1/engine/registry')).validators;
  }

  /** Balance of an address (public REST). */
  async balance(address: string): Promise<string> {
    return (await this.call<{ balance: string }>('GET', `/api/v1/accounts/${address}`)).balance;
  }
}
