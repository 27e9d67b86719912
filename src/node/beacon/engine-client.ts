/** The beacon's client for the execution engine API (loopback, or HS256 JWT when a secret is set). */
import { SvcError, WrongChainError } from '../../core/errors.js';
import { JSON_MEDIA_TYPE, SSZ_MEDIA_TYPE } from '../../api/media.js';
import type { RegistryEntry, BlockRef, ImportResult } from '../../api/execution.js';
import { decodeImportAnswer } from '../../api/import-answer.js';
import { signEngineJwt } from '../shared/jwt.js';
import { type HttpAnswer, HttpClient, jsonBody } from '../../util/http-client.js';
import type { AccountProofWire } from '../../core/state/trie.js';
import type { CounterpartsView } from '../../api/bridge.js';

/** Execution answered with an error envelope: `code` and `message` are execution's. */
export class EngineError extends SvcError {}

const TIMEOUT_MS = 30_000;

/** The chain an execution node runs (GET /api/v1/engine/config), as the beacon expects it too. */
export interface EngineChainConfig {
  chain_id: string;
  network_id: number;
  genesis_hash: string;
}

export class EngineClient {
  /** True once execution's chain was checked and nothing since suggests it may have changed. */
  private verified = false;
  /** Why the link to execution is down (unreachable or another chain); undefined while it works. */
  private problem: SvcError | undefined;
  /** Keep-alive connections to execution: fetch cost about 4× the CPU per call on a 2-core devnet. */
  private readonly http: HttpClient;

  constructor(
    readonly baseUrl: string,
    /** The beacon's own chain: execution must run the same one. */
    readonly expected: EngineChainConfig,
    private readonly jwtSecret?: Uint8Array,
    /** Deadline of each call, answer included. */
    private readonly timeoutMs = TIMEOUT_MS,
  ) {
    this.http = new HttpClient(baseUrl, { maxSockets: 4 });
  }

  /** Ends calls in flight (EXECUTION_UNREACHABLE) and closes the connections; for shutdown. */
  close(): void {
    this.http.close();
  }

  // A Uint8Array body goes as SSZ bytes (application/octet-stream), anything else as JSON. With
  // `decodeSsz`, the call asks for an SSZ answer and decodes it with that (errors stay JSON).
  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, decodeSsz?: (bytes: Uint8Array) => T): Promise<T> {
    const headers: Record<string, string> = {};
    if (decodeSsz) headers.accept = `${SSZ_MEDIA_TYPE}, ${JSON_MEDIA_TYPE}`;
    let payload: string | Uint8Array | undefined;
    if (body instanceof Uint8Array) {
      headers['content-type'] = SSZ_MEDIA_TYPE;
      payload = body;
    } else if (body !== undefined) {
      headers['content-type'] = JSON_MEDIA_TYPE;
      payload = JSON.stringify(body);
    }
    if (this.jwtSecret) headers.authorization = `Bearer ${signEngineJwt(this.jwtSecret)}`;
    let res: HttpAnswer;
    try {
      res = await this.http.request({ method, path, headers, body: payload, timeoutMs: this.timeoutMs });
    } catch (err) {
      // Whatever answers on this URL next may be another node (a restart on other data): the
      // chain is checked again before anything is sent to it.
      this.verified = false;
      this.problem = new EngineError('EXECUTION_UNREACHABLE', `execution engine at ${this.baseUrl} is unreachable: ${(err as Error).message}`, 503);
      throw this.problem;
    }
    if (this.verified) this.problem = undefined;
    if (decodeSsz && res.ok && res.contentType === SSZ_MEDIA_TYPE) {
      try {
        return decodeSsz(res.body);
      } catch (err) {
        throw new EngineError('EXECUTION_ERROR', `execution answered a malformed SSZ answer: ${(err as Error).message}`, 502);
      }
    }
    const json = jsonBody(res) as { success?: boolean; data?: T; error?: { code: string; message: string } } | undefined;
    if (!json || typeof json !== 'object' || json.success !== true) {
      const e = json?.error;
      throw new EngineError(typeof e?.code === 'string' ? e.code : 'EXECUTION_ERROR', typeof e?.message === 'string' ? e.message : `execution answered HTTP ${res.status}`, res.status >= 500 ? 502 : 400);
    }
    return json.data as T;
  }

  /** Execution's chain (the engine configuration exchange). */
  config(): Promise<EngineChainConfig> {
    return this.call('GET', '/api/v1/engine/config');
  }

  /**
   * Asks execution which chain it runs and compares it with the beacon's: throws WRONG_CHAIN
   * (naming both chain ids and genesis hashes) on a mismatch, EXECUTION_UNREACHABLE when it
   * does not answer. Either way nothing more is sent to it until a later check passes.
   */
  async checkChain(): Promise<EngineChainConfig> {
    let got: EngineChainConfig;
    try {
      got = await this.config();
    } catch (err) {
      this.verified = false;
      if (err instanceof SvcError && err.code !== 'EXECUTION_UNREACHABLE') this.problem = err;
      throw err;
    }
    const e = this.expected;
    if (got.chain_id !== e.chain_id || got.genesis_hash !== e.genesis_hash || got.network_id !== e.network_id) {
      this.verified = false;
      this.problem = new WrongChainError(
        `execution at ${this.baseUrl} runs another chain: chain id ${JSON.stringify(got.chain_id)} (network ${got.network_id}), genesis ${got.genesis_hash}; ` +
          `this beacon runs chain id ${JSON.stringify(e.chain_id)} (network ${e.network_id}), genesis ${e.genesis_hash}`,
      );
      throw this.problem;
    }
    this.verified = true;
    this.problem = undefined;
    return got;
  }

  /** Why execution cannot be driven now (EXECUTION_UNREACHABLE, WRONG_CHAIN, …), or undefined. */
  linkProblem(): SvcError | undefined {
    return this.problem;
  }

  // Calls that change execution's state go only to a node whose chain was checked.
  private async checked<T>(path: string, body: unknown, decodeSsz?: (bytes: Uint8Array) => T): Promise<T> {
    if (!this.verified) await this.checkChain();
    return this.call('POST', path, body, decodeSsz);
  }

  /**
   * Validates and applies a block given as its SSZ bytes (`encodeBlock`); execution re-verifies
   * everything. Asks for the compact answer: receipts are parsed only if read, and its receipts'
   * outcomes say which are worth reading (`receiptsWhere`).
   */
  newPayload(ssz: Uint8Array): Promise<ImportResult> {
    return this.checked('/api/v1/engine/newPayload', ssz, decodeImportAnswer);
  }

  /** Makes `head` canonical and records `finalized`. */
  forkchoiceUpdated(head: string, finalized: string): Promise<{ head: BlockRef; finalized: BlockRef; reverted: number; applied: number }> {
    return this.checked('/api/v1/engine/forkchoiceUpdated', { head_block_hash: head, finalized_block_hash: finalized });
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

  /** Account (and storage) proof against the post-state of block `blockHash` (public REST); execution's code on failure (STATE_PRUNED, NOT_FOUND). */
  accountProof(address: string, blockHash: string, keys: readonly string[]): Promise<AccountProofWire & { block_hash: string }> {
    const q = keys.length > 0 ? `&keys=${keys.join(',')}` : '';
    return this.call('GET', `/api/v1/accounts/${address}/proof?block=${blockHash}${q}`);
  }

  /** This chain and the bridge counterparts registered in execution's head state (public REST). */
  counterparts(): Promise<CounterpartsView> {
    return this.call('GET', '/api/v1/bridge/counterparts');
  }

  /** Balance of an address (public REST). */
  async balance(address: string): Promise<string> {
    return (await this.call<{ balance: string }>('GET', `/api/v1/accounts/${address}`)).balance;
  }
}
