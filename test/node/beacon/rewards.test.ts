/**
 * Reward ledger: per-epoch totals, attesters counted once, deterministic credit order, paid-once
 * bookkeeping, JSON persistence across simulated restarts before and after the acknowledgement,
 * and reorgs (forgetProposal).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MalformedError, SvcError } from '../../../src/core/errors.js';
import { type RewardLedgerJson, RewardLedger, type RewardParams } from '../../../src/node/beacon/rewards.js';
import { expectError } from '../../helpers/assert.js';

const P: RewardParams = { proposerReward: 2_000_000_000n, attesterReward: 300_000_000n };
const a = (n: number): string => '0x' + n.toString(16).padStart(40, '0');
const X = a(0x0c);
const Y = a(0x0a);
const Z = a(0x0b);

/** A restart: the ledger goes through JSON text, as the beacon will persist it. */
const restart = (l: RewardLedger): RewardLedger => RewardLedger.fromJson(JSON.parse(JSON.stringify(l.toJson())), P);

/** Execution's side of creditRewards: applies an epoch once, answers already_applied after. */
class FakeExecution {
  readonly balances = new Map<string, bigint>();
  readonly applied = new Set<number>();

  credit(req: { epoch: number; credits: Array<{ address: string; amount: string }> }): { already_applied: boolean } {
    if (this.applied.has(req.epoch)) return { already_applied: true };
    for (const c of req.credits) this.balances.set(c.address, (this.balances.get(c.address) ?? 0n) + BigInt(c.amount));
    this.applied.add(req.epoch);
    return { already_applied: false };
  }
}

const test = suite('reward ledger');

test('totals per epoch: proposer per block, attester once per epoch', () => {
  const l = new RewardLedger(P);
  assert.ok(l.recordProposal(3, X));
  assert.ok(l.recordProposal(3, X));
  assert.ok(l.recordProposal(3, Y));
  assert.ok(l.recordAttestation(3, X));
  assert.ok(l.recordAttestation(3, Z));
  assert.ok(l.recordProposal(4, Z));
  assert.equal(l.due(3), [
    { address: Y, amount: P.proposerReward },
    { address: Z, amount: P.attesterReward },
    { address: X, amount: 2n * P.proposerReward + P.attesterReward },
  ]);
  assert.equal(l.due(4), [{ address: Z, amount: P.proposerReward }]);
  assert.equal(l.due(5), []);
});

test('an attester is counted once per epoch, whatever the number or case of its attestations', () => {
  const l = new RewardLedger(P);
  assert.is(l.recordAttestation(7, X), true);
  assert.is(l.recordAttestation(7, X), false);
  assert.is(l.recordAttestation(7, X.toUpperCase().replace('0X', '0x')), false);
  assert.is(l.recordAttestation(8, X), true);
  assert.equal(l.due(7), [{ address: X, amount: P.attesterReward }]);
});

test('due() order is by address, independent of recording order', () => {
  const addrs = [a(0xff), a(1), a(0x10), a(0xabc), a(2)];
  const l1 = new RewardLedger(P);
  const l2 = new RewardLedger(P);
  for (const x of addrs) l1.recordAttestation(1, x);
  for (const x of [...addrs].reverse()) l2.recordAttestation(1, x);
  const expected = [a(1), a(2), a(0x10), a(0xff), a(0xabc)];
  assert.equal(l1.due(1).map((c) => c.address), expected);
  assert.equal(l1.due(1), l2.due(1));
  assert.equal(l1.creditRequest(1), { epoch: 1, credits: expected.map((address) => ({ address, amount: '300000000' })) });
});

test('zero rewards produce no credit entries', () => {
  const l = new RewardLedger({ proposerReward: 0n, attesterReward: 5n });
  l.recordProposal(1, X);
  l.recordAttestation(1, Y);
  assert.equal(l.due(1), [{ address: Y, amount: 5n }]);
});

test('markPaid clears the epoch, is idempotent, and refuses late records', () => {
  const l = new RewardLedger(P);
  l.recordProposal(1, X);
  l.recordProposal(2, Y);
  assert.equal(l.unpaidEpochs(10), [1, 2]);
  l.markPaid(1);
  l.markPaid(1);
  assert.equal(l.due(1), []);
  assert.ok(l.isPaid(1));
  assert.equal(l.unpaidEpochs(10), [2]);
  assert.is(l.recordProposal(1, X), false);
  assert.is(l.recordAttestation(1, X), false);
  assert.equal(l.due(1), []);
  assert.equal(l.due(2), [{ address: Y, amount: P.proposerReward }]);
});

test('unpaidEpochs(before) lists only earlier epochs, ascending; out-of-order payment', () => {
  const l = new RewardLedger(P);
  for (const e of [9, 3, 5, 7]) l.recordAttestation(e, X);
  assert.equal(l.unpaidEpochs(7), [3, 5]);
  l.markPaid(5); // 3 failed and waits for a retry
  assert.equal(l.unpaidEpochs(100), [3, 7, 9]);
  assert.ok(l.isPaid(5));
  assert.not.ok(l.isPaid(3));
  assert.ok(l.recordProposal(3, Y), 'epoch 3 still open');
  l.markPaid(3);
  assert.equal(l.unpaidEpochs(100), [7, 9]);
  // Epoch 4 had nothing recorded and lies below a paid epoch: closed. 6 is above every payment.
  for (const e of [0, 1, 2, 3, 4, 5]) assert.ok(l.isPaid(e), `epoch ${e} closed`);
  assert.not.ok(l.isPaid(6));
  assert.not.ok(l.isPaid(7));
  assert.equal(l.toJson().paid, []);
  // Paying in order leaves no per-epoch bookkeeping behind.
  l.markPaid(7);
  l.markPaid(9);
  assert.equal(l.toJson(), { version: 1, closed_below: 10, paid: [], epochs: [] });
});

test('restart before the acknowledgement retries the epoch; execution never pays twice', () => {
  const exec = new FakeExecution();
  let l = new RewardLedger(P);
  l.recordProposal(1, X);
  l.recordAttestation(1, Y);
  l.recordAttestation(2, X);
  const saved = l.toJson();
  // Credit sent and applied, then the beacon crashed before markPaid was persisted.
  exec.credit(l.creditRequest(1));
  l = RewardLedger.fromJson(JSON.parse(JSON.stringify(saved)), P);
  assert.equal(l.unpaidEpochs(3), [1, 2]);
  for (const e of l.unpaidEpochs(3)) {
    exec.credit(l.creditRequest(e));
    l.markPaid(e);
  }
  assert.is(exec.balances.get(X), P.proposerReward + P.attesterReward);
  assert.is(exec.balances.get(Y), P.attesterReward);
  assert.equal(l.unpaidEpochs(3), []);
});

test('restart after markPaid: nothing is due again, nothing is lost', () => {
  let l = new RewardLedger(P);
  l.recordProposal(1, X);
  l.recordProposal(2, Y);
  l.recordAttestation(2, Z);
  l.markPaid(1);
  l = restart(l);
  assert.ok(l.isPaid(1));
  assert.equal(l.unpaidEpochs(10), [2]);
  assert.equal(l.due(1), []);
  assert.is(l.recordProposal(1, X), false);
  assert.equal(l.due(2), [
    { address: Y, amount: P.proposerReward },
    { address: Z, amount: P.attesterReward },
  ]);
  // A payment out of order survives the restart too.
  l.recordAttestation(5, X);
  l.markPaid(5);
  l = restart(l);
  assert.ok(l.isPaid(5));
  assert.not.ok(l.isPaid(2));
  assert.equal(l.toJson().paid, [5]);
});

test('toJson is deterministic and round-trips', () => {
  const l1 = new RewardLedger(P);
  const l2 = new RewardLedger(P);
  l1.recordProposal(4, X);
  l1.recordProposal(4, Y);
  l1.recordProposal(4, X);
  l1.recordAttestation(2, Z);
  l2.recordAttestation(2, Z);
  l2.recordProposal(4, Y);
  l2.recordProposal(4, X);
  l2.recordProposal(4, X);
  const json: RewardLedgerJson = {
    version: 1,
    closed_below: 0,
    paid: [],
    epochs: [
      { epoch: 2, proposals: [], attesters: [Z] },
      {
        epoch: 4,
        proposals: [
          { address: Y, count: 1 },
          { address: X, count: 2 },
        ],
        attesters: [],
      },
    ],
  };
  assert.equal(l1.toJson(), json);
  assert.is(JSON.stringify(l1.toJson()), JSON.stringify(l2.toJson()));
  assert.equal(restart(l1).toJson(), json);
});

test('forgetProposal removes a reverted block before payment', () => {
  const l = new RewardLedger(P);
  l.recordProposal(6, X);
  l.recordProposal(6, X);
  l.recordAttestation(6, Y);
  assert.is(l.forgetProposal(6, X), 'removed');
  assert.equal(l.due(6), [
    { address: Y, amount: P.attesterReward },
    { address: X, amount: P.proposerReward },
  ]);
  assert.is(l.forgetProposal(6, X), 'removed');
  assert.is(l.forgetProposal(6, X), 'not-found');
  assert.is(l.forgetProposal(6, Z), 'not-found');
  assert.equal(l.due(6), [{ address: Y, amount: P.attesterReward }]);
  // An epoch whose only entry was a reverted block disappears entirely.
  l.recordProposal(8, Z);
  assert.is(l.forgetProposal(8, Z), 'removed');
  assert.equal(l.unpaidEpochs(100), [6]);
  l.markPaid(6);
  assert.is(l.forgetProposal(6, Y), 'already-paid');
});

test('bad input is MalformedError; bad persisted state is refused', () => {
  const l = new RewardLedger(P);
  expectError(() => l.recordProposal(-1, X), MalformedError, { message: 'malformed epoch: expected a non-negative integer' });
  expectError(() => l.recordAttestation(1, '0x1234'), MalformedError, { message: 'malformed validatorAddress: expected a 0x-prefixed 20-byte hex address' });
  expectError(() => l.recordProposal(1, 'nope'), MalformedError, { field: 'proposerAddress' });
  assert.equal(l.toJson().epochs, []);
  expectError(() => new RewardLedger({ proposerReward: -1n, attesterReward: 0n }), SvcError, { code: 'INVALID_REWARD_PARAMS' });
  const base = (): RewardLedgerJson => ({ version: 1, closed_below: 3, paid: [5], epochs: [{ epoch: 4, proposals: [{ address: X, count: 1 }], attesters: [Y] }] });
  RewardLedger.fromJson(base(), P);
  expectError(() => RewardLedger.fromJson({ ...base(), version: 2 }, P), MalformedError, { message: 'malformed rewardLedger.version: expected 1, got 2' });
  expectError(() => RewardLedger.fromJson({ ...base(), epochs: [{ epoch: 5, proposals: [], attesters: [X] }] }, P), MalformedError, {
    message: 'malformed rewardLedger.epochs[0].epoch: epoch 5 is recorded as both paid and unpaid',
  });
  expectError(() => RewardLedger.fromJson({ ...base(), epochs: [{ epoch: 1, proposals: [], attesters: [X] }] }, P), MalformedError, {
    message: 'malformed rewardLedger.epochs[0].epoch: epoch 1 is recorded as both paid and unpaid',
  });
  expectError(() => RewardLedger.fromJson({ ...base(), paid: [2] }, P), MalformedError, { message: 'malformed rewardLedger.paid[0]: below closed_below' });
  expectError(() => RewardLedger.fromJson({ ...base(), epochs: [{ epoch: 4, proposals: [{ address: X, count: '1' }], attesters: [] }] }, P), MalformedError, {
    field: 'rewardLedger.epochs[0].proposals[0].count',
  });
  expectError(() => RewardLedger.fromJson({ ...base(), extra: 1 }, P), MalformedError, { message: 'malformed rewardLedger.extra: unknown field' });
});

test.run();
