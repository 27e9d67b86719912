/**
 * Pool maintenance on its own: what each canonical change asks of admission (removals, stale
 * drops once per sender, recounts of reverted senders, re-admission of what a reorg left out),
 * recorded by a fake admission. The end-to-end effect is covered by the node's reorg tests.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Transaction } from '../../../../src/core/types/transaction.js';
import type { BlockRecord, CanonicalChange } from '../../../../src/node/execution/chain.js';
import type { Admitted } from '../../../../src/node/execution/txpool/admission.js';
import { maintainPool, type MaintainedPool } from '../../../../src/node/execution/txpool/maintain.js';
import { captureLog } from '../../../helpers/log.js';

const record = {} as BlockRecord;
/** A transaction maintenance only passes on: tagged so the test can tell which one came back. */
const tx = (tag: string) => ({ tag }) as unknown as Transaction;

/** A fake admission that records every call; submissions of `refuse` are refused. */
function recorder(refuse = new Set<string>()) {
  const calls: string[] = [];
  const admission: MaintainedPool = {
    forget: (hashes) => void calls.push(`forget ${hashes.join(',')}`),
    dropStale: (sender) => void calls.push(`dropStale ${sender}`),
    submit: (t, source) => {
      const tag = (t as unknown as { tag: string }).tag;
      calls.push(`submit ${tag} ${source}`);
      return refuse.has(tag) ? Promise.reject(new Error(`refused ${tag}`)) : Promise.resolve({} as Admitted);
    },
    pool: { touch: (sender) => void calls.push(`touch ${sender}`) },
  };
  return { admission, calls };
}

const test = suite('pool maintenance');

test('an import forgets its transactions and drops stale ones once per sender, and re-pools nothing', () => {
  const { admission, calls } = recorder();
  const change: CanonicalChange = {
    applied: [
      { record, txHashes: ['h1', 'h2'], senders: ['A', 'B'], slashed: 0 },
      { record, txHashes: ['h3'], senders: ['A'], slashed: 0 },
    ],
    reverted: [],
  };
  maintainPool(change, admission, captureLog().log);
  assert.equal(calls, ['forget h1,h2', 'forget h3', 'dropStale A', 'dropStale B']);
});

test('a reorg recounts reverted senders and re-admits only what the new branch did not include', async () => {
  const { admission, calls } = recorder(new Set(['r2']));
  const { log, lines } = captureLog();
  const change: CanonicalChange = {
    applied: [{ record, txHashes: ['x1', 'r3'], senders: ['C'], slashed: 0 }],
    reverted: [
      { record, txHashes: ['r1', 'r2'], transactions: [tx('r1'), tx('r2')], senders: ['A'] },
      { record, txHashes: ['r3'], transactions: [tx('r3')], senders: ['B'] },
    ],
  };
  maintainPool(change, admission, log);
  assert.equal(calls, ['forget x1,r3', 'dropStale C', 'touch A', 'touch B', 'submit r1 reorg', 'submit r2 reorg']);
  await new Promise((r) => setImmediate(r));
  // A refused re-admission is only logged: the change is committed already.
  assert.equal(lines.map((l) => [l.level, l.msg, l.fields.error]), [['debug', 'reverted tx not re-pooled', 'refused r2']]);
});

test.run();
