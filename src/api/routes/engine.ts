/**
 * The engine API of the execution node (beacon → execution, docs/execution.md "Engine API"):
 * each route once, for the server (src/node/execution/api/engine.ts) and the one engine client
 * (src/client/engine.ts). `Res` is the `data` of the `{success: true, data}` envelope. The
 * server admits these routes only from loopback or with a valid engine JWT; which routes those
 * are is read from ENGINE_ROUTES, so an alias is guarded like its route.
 */
import type { BlockJson } from '../../core/types/block.js';
import type { EngineChainConfig, ForkchoiceRequest, ForkchoiceView, ImportResult, PendingTransactionsView, RegistryView } from '../execution.js';
import type { PayloadQuery, PayloadView } from '../block-production.js';
import { route, routePaths } from './route.js';

/**
 * Validates and applies a block: its SSZ bytes (`encodeBlock`, application/octet-stream) or the
 * spec's JSON. Answers JSON, or the compact SSZ answer (api/import-answer.ts) when Accept asks for
 * it. POST /api/v1/blocks is the spec's other name for it.
 */
export const newPayload = route<ImportResult, BlockJson | Uint8Array>()('POST', '/api/v1/engine/newPayload', ['/api/v1/blocks']);

/** Makes `head_block_hash` canonical and records `finalized_block_hash`. */
export const forkchoiceUpdated = route<ForkchoiceView, ForkchoiceRequest>()('POST', '/api/v1/engine/forkchoiceUpdated');

/** Includable pool entries in build order under `max_gas` (base 10); an SSZ envelope list when Accept asks for it. */
export const getPendingTransactions = route<PendingTransactionsView, undefined, { max_gas?: string | bigint }>()('GET', '/api/v1/engine/getPendingTransactions');

/**
 * What a block on `parent` is built from, in one call (api/block-production.ts): the parent's
 * post-state root and the includable pool entries in build order under the block gas cap; the
 * SSZ PayloadSsz when Accept asks for it.
 */
export const getPayload = route<PayloadView, undefined, PayloadQuery>()('GET', '/api/v1/engine/getPayload');

/** The configuration exchange: the chain execution runs. */
export const engineConfig = route<EngineChainConfig>()('GET', '/api/v1/engine/config');

/** Execution's validator registry (genesis plus deposits and exits). */
export const engineRegistry = route<RegistryView>()('GET', '/api/v1/engine/registry');

/** Every engine route: the server guards exactly these (and their aliases). */
export const ENGINE_ROUTES = [newPayload, forkchoiceUpdated, getPendingTransactions, getPayload, engineConfig, engineRegistry] as const;

const ENGINE_PATHS: ReadonlySet<string> = new Set(ENGINE_ROUTES.flatMap((r) => routePaths(r)));

/**
 * Whether a matched route pattern (Fastify's `routeOptions.url`) is an engine route or an alias of
 * one. POST /api/v1/blocks is newPayload's alias; GET /api/v1/blocks/:id is a public route.
 */
export function isEngineRoute(pattern: string | undefined): boolean {
  return pattern !== undefined && ENGINE_PATHS.has(pattern);
}
