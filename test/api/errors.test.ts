/**
 * The error-code table (src/api/errors.ts): every domain's codes have a row (checked by the compiler
 * below and in each layer's errors.ts, and here over every code literal in src/), rows are HTTP
 * error statuses, and the HTTP edge, relays and clients read them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_STATUS, type Listed, RelayedError, hasCode, httpStatusOf, isServerFault, statusOfCode } from '../../src/api/errors.js';
import { BlockError, MalformedError, SvcError, TxError } from '../../src/core/errors.js';
import type { HttpClientErrorCode } from '../../src/util/http-client.js';
import type { VmErrorCode } from '../../src/vm/errors.js';
import type { SdkRuleCode } from '../../src/contract/compile.js';
import type { SyncProtocolErrorCode } from '../../src/node/beacon/sync/blocks-by-range.js';
import type { RandaoChainErrorCode } from '../../src/node/validator/randao/chain.js';
import { ExecutionError } from '../../src/node/execution/errors.js';
import { ExecutionRejectedError } from '../../src/node/beacon/errors.js';
import { classify } from '../../src/node/shared/http.js';

// Unions that live outside a layer's errors.ts (whose lists are `satisfies readonly ErrorCode[]`):
// this alias does not compile if one of their codes has no row.
export type CheckedElsewhere = Listed<HttpClientErrorCode | VmErrorCode | SdkRuleCode | SyncProtocolErrorCode | RandaoChainErrorCode>;

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

test('every row is an HTTP error status', () => {
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
    assert.match(code, /^[A-Z][A-Z0-9_]*$/, code);
  }
});

test('every code literal an svc error is raised with in src/ has a row', () => {
  // `new XError('CODE'`, `super('CODE'` and `throw new ExecutionError(\n 'CODE'`: the literal forms.
  // InclusionError's first argument is the rule it names (its code is INVALID_ATTESTATION).
  const literal = /(?:new (?!InclusionError)[A-Z][A-Za-z0-9]*Error|super)\(\s*'([A-Z][A-Z0-9_]+)'/g;
  const missing: string[] = [];
  let seen = 0;
  for (const file of sources(SRC)) {
    for (const m of readFileSync(file, 'utf8').matchAll(literal)) {
      seen++;
      if (!Object.hasOwn(ERROR_STATUS, m[1]!)) missing.push(`${file.slice(SRC.length + 1)}: ${m[1]}`);
    }
  }
  assert.ok(seen > 300, `the scan found ${seen} raised codes: the pattern no longer matches how errors are raised`);
  assert.equal(missing, [], 'codes without a status row');
});

test('errors carry no status; the table decides it, the same for every layer that raises a code', () => {
  const e = new ExecutionError('STATE_PRUNED', 'pruned');
  assert.not.ok('status' in e, 'an error has no status of its own');
  assert.is(httpStatusOf(e), 410);
  assert.is(httpStatusOf(new MalformedError('tx.Value')), 400);
  assert.is(httpStatusOf(new TxError('ErrInvalidNonce')), 400);
  assert.is(httpStatusOf(new BlockError('UNKNOWN_PARENT')), 400);
  assert.is(httpStatusOf(new SvcError('RATE_LIMITED', 'slow down')), 429);
  assert.is(httpStatusOf(new SvcError('SHUTTING_DOWN', 'bye')), 503);
  // A code this version does not list (another version's, relayed) is a bad request, as before rows.
  assert.is(statusOfCode('SOME_FUTURE_CODE'), 400);
  assert.is(statusOfCode('toString'), 400, 'only own rows count');
});

test('a relay answers with the status it chose; without one, with the code row', () => {
  assert.is(httpStatusOf(new RelayedError('NONCE_TOO_LOW', 'x', 502)), 502);
  assert.is(httpStatusOf(new RelayedError('EXECUTION_UNREACHABLE', 'x')), 503);
  assert.is(httpStatusOf(new ExecutionRejectedError('EXECUTION_UNREACHABLE', 'x', true)), 503);
  assert.is(httpStatusOf(new ExecutionRejectedError('STATE_ROOT_MISMATCH', 'x', false)), 400);
  assert.ok(isServerFault(new ExecutionRejectedError('EXECUTION_UNREACHABLE', 'x', true)));
  assert.not.ok(isServerFault(new ExecutionRejectedError('STATE_ROOT_MISMATCH', 'x', false)));
});

test('the HTTP edge answers an error with its row, and its own failures with theirs', () => {
  assert.equal(classify(new ExecutionError('STATE_PRUNED', 'pruned')), { status: 410, code: 'STATE_PRUNED', message: 'pruned' });
  assert.equal(classify(new Error('bug')), { status: ERROR_STATUS.INTERNAL, code: 'INTERNAL', message: 'internal error' });
  assert.is(classify({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', message: 'too large' }).status, ERROR_STATUS.BODY_TOO_LARGE);
  assert.is(classify({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }).status, ERROR_STATUS.UNSUPPORTED_MEDIA_TYPE);
});

test('hasCode matches an error by code, and nothing else', () => {
  assert.ok(hasCode(new SvcError('NOT_FOUND', 'x'), 'NOT_FOUND'));
  assert.not.ok(hasCode(new SvcError('NOT_FOUND', 'x'), 'UNKNOWN_BLOCK'));
  assert.not.ok(hasCode(null, 'NOT_FOUND'));
  assert.not.ok(hasCode('NOT_FOUND', 'NOT_FOUND'));
});

test.run();
