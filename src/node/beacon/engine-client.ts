/**
 * The beacon's link to its execution node: the one engine client (src/client/engine.ts), bound to
 * the beacon's chain and minting the engine JWT from the beacon's secret. The names are
 * re-exported for the beacon modules that import them from here.
 */
import { EngineClient } from '../../client/engine.js';
import type { EngineChainConfig } from '../../api/execution.js';
import { signEngineJwt } from '../shared/jwt.js';

export { EngineClient, EngineError } from '../../client/engine.js';

/**
 * An engine client for the beacon: state-changing calls only after execution's chain matched
 * `chain`, an HS256 JWT per call when `jwtSecret` is set (loopback needs none), failures worded
 * EXECUTION_UNREACHABLE / EXECUTION_ERROR. A URL other than http(s) is INVALID_URL.
 */
export function connectEngine(executionUrl: string, chain: EngineChainConfig, jwtSecret?: Uint8Array, timeoutMs?: number): EngineClient {
  return new EngineClient(executionUrl, { chain, ...(jwtSecret ? { jwt: () => signEngineJwt(jwtSecret) } : {}), ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}
