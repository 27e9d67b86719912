/**
 * The engine route table: the engine guard's set of routes is the table's, aliases included, and
 * nothing else (a public route that shares a prefix with an alias is not guarded).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_ROUTES, isEngineRoute, newPayload } from '../../../src/api/routes/engine.js';
import { block, receipt, faucetClaim } from '../../../src/api/routes/execution.js';
import { routePaths } from '../../../src/api/routes/route.js';

test('every engine path and alias is guarded; public routes and unmatched requests are not', () => {
  for (const r of ENGINE_ROUTES) for (const p of routePaths(r)) assert.ok(isEngineRoute(p), p);
  assert.ok(newPayload.aliases.length > 0 && isEngineRoute(newPayload.aliases[0]), "newPayload's alias");
  for (const r of [block, receipt, faucetClaim]) for (const p of routePaths(r)) assert.not.ok(isEngineRoute(p), p);
  assert.not.ok(isEngineRoute(undefined), 'no matched route (404)');
});

test.run();
