/**
 * The sync wire formats: status (fixed 124 bytes) and blocks_by_range requests (16 bytes) round
 * trip, refuse every other length and integers past 2^53, cap the count at 64; a status on another
 * chain id or genesis is named as such; classification of import failures decides who is penalised.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainIdBytes } from '../../../../src/core/crypto/domain.js';
import { MalformedError, SvcError, WrongChainError } from '../../../../src/core/errors.js';
import { decodeRangeRequest, encodeRangeRequest, MAX_BLOCKS_PER_REQUEST, SyncProtocolError } from '../../../../src/node/beacon/sync/blocks-by-range.js';
import { decodeStatus, encodeStatus, otherChainReason, STATUS_BYTES, type StatusMessage } from '../../../../src/node/beacon/sync/status.js';
import { classifyImportError } from '../../../../src/node/beacon/sync/verdict.js';
import { ExecutionRejectedError, IncludedSlashingError } from '../../../../src/node/beacon/chain.js';
import { httpStatusOf } from '../../../../src/api/errors.js';

const root = (b: number) => '0x' + b.toString(16).padStart(2, '0').repeat(32);
const status: StatusMessage = { chainId: chainIdBytes('svc-beacon'), genesisHash: root(1), headRoot: root(2), headSlot: 1234, finalizedRoot: root(3), finalizedEpoch: 77 };

test('status round-trips in exactly 124 bytes', () => {
  const bytes = encodeStatus(status);
  assert.is(bytes.length, STATUS_BYTES);
  assert.is(STATUS_BYTES, 124);
  assert.equal(decodeStatus(bytes), status);
  // Little-endian head_slot right after chain id, genesis hash and head root.
  assert.is(bytes[12 + 64], 1234 & 0xff);
});

test('status of any other length, or with a slot past 2^53, is malformed', () => {
  const bytes = encodeStatus(status);
  for (const bad of [bytes.subarray(0, 123), new Uint8Array(125), new Uint8Array(0)]) assert.throws(() => decodeStatus(bad), (e: unknown) => e instanceof MalformedError);
  const huge = bytes.slice();
  new DataView(huge.buffer).setBigUint64(76, 2n ** 60n, true);
  assert.throws(() => decodeStatus(huge), (e: unknown) => e instanceof MalformedError && /2\^53/.test((e as Error).message));
});

test('another chain id or genesis hash is named; our own chain is not', () => {
  const ours = { chainId: 'svc-beacon', genesisHash: root(1) };
  assert.is(otherChainReason(ours, status), undefined);
  assert.match(otherChainReason(ours, { ...status, chainId: chainIdBytes('svc-other') }) ?? '', /chain id "svc-other"/);
  assert.match(otherChainReason(ours, { ...status, genesisHash: root(9) }) ?? '', /genesis/);
});

test('range requests round-trip; the count is capped at 64; other lengths and huge slots are bad requests', () => {
  assert.equal(decodeRangeRequest(encodeRangeRequest({ startSlot: 5, count: 10 })), { startSlot: 5, count: 10 });
  assert.equal(decodeRangeRequest(encodeRangeRequest({ startSlot: 0, count: 1_000_000 })), { startSlot: 0, count: MAX_BLOCKS_PER_REQUEST });
  for (const bad of [new Uint8Array(15), new Uint8Array(17)]) assert.throws(() => decodeRangeRequest(bad), (e: unknown) => e instanceof SyncProtocolError && httpStatusOf(e) === 400);
  const huge = new Uint8Array(16);
  new DataView(huge.buffer).setBigUint64(0, 2n ** 63n, true);
  assert.throws(() => decodeRangeRequest(huge), (e: unknown) => e instanceof SyncProtocolError && e.code === 'BAD_RANGE_REQUEST');
});

test('import failures: missing ancestors, future and stale messages are not the sender\'s fault; broken rules are', () => {
  assert.equal(classifyImportError(new SvcError('UNKNOWN_PARENT', 'x')), { kind: 'unknown_parent', reason: 'UNKNOWN_PARENT' });
  assert.equal(classifyImportError(new SvcError('UNKNOWN_BLOCK', 'x')), { kind: 'unknown_block', reason: 'UNKNOWN_BLOCK' });
  assert.equal(classifyImportError(new SvcError('FUTURE_SLOT', 'x')), { kind: 'future', reason: 'FUTURE_SLOT' });
  assert.is(classifyImportError(new SvcError('SLASHABLE_ATTESTATION', 'x')).kind, 'duplicate');
  assert.is(classifyImportError(new ExecutionRejectedError('EXECUTION_UNREACHABLE', 'x', true)).kind, 'local');
  assert.is(classifyImportError(new WrongChainError('x')).kind, 'local');
  assert.is(classifyImportError(new Error('boom')).kind, 'local');
  // Judged against our registry, which may differ from the sender's: not a ban.
  for (const code of ['UNKNOWN_VALIDATOR', 'INACTIVE_VALIDATOR', 'WRONG_PROPOSER', 'WRONG_VRF_SEED']) assert.is(classifyImportError(new SvcError(code, 'x')).kind, 'local', code);
  assert.equal(classifyImportError(new SvcError('INVALID_BLOCK_SIGNATURE', 'x')), { kind: 'invalid', reason: 'INVALID_BLOCK_SIGNATURE' });
  // Included slashing evidence: registry-dependent refusals are local, forged evidence is the sender's fault.
  assert.equal(classifyImportError(new IncludedSlashingError('ALREADY_SLASHED', 'x')), { kind: 'local', reason: 'INVALID_SLASHING' });
  assert.is(classifyImportError(new IncludedSlashingError('UNKNOWN_VALIDATOR', 'x')).kind, 'local');
  assert.equal(classifyImportError(new IncludedSlashingError('INVALID_EVIDENCE_SIGNATURE', 'x')), { kind: 'invalid', reason: 'INVALID_SLASHING' });
  assert.equal(classifyImportError(new SvcError('EXECUTION_REJECTED', 'x')), { kind: 'invalid', reason: 'EXECUTION_REJECTED' });
  // A failed state transition is provable; execution lacking the parent or its pruned state is not.
  assert.equal(classifyImportError(new ExecutionRejectedError('STATE_ROOT_MISMATCH', 'x', false)), { kind: 'invalid', reason: 'EXECUTION_REJECTED' });
  assert.equal(classifyImportError(new ExecutionRejectedError('PARENT_STATE_PRUNED', 'x', false)), { kind: 'local', reason: 'PARENT_STATE_PRUNED' });
  assert.equal(classifyImportError(new ExecutionRejectedError('UNKNOWN_PARENT', 'x', false)), { kind: 'local', reason: 'UNKNOWN_PARENT' });
  // A branch finality ruled out is stale, not forged.
  assert.is(classifyImportError(new SvcError('FINALIZED_CONFLICT', 'x')).kind, 'duplicate');
});

test.run();
