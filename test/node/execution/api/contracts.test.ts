/** ContractReader's eth_estimateGas search: bounded runs, an answer that succeeds, within the tolerance. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ContractBackend, ContractReader, ESTIMATE_GAS_BUDGET_CAPS, ESTIMATE_MAX_RUNS } from '../../../../src/node/execution/api/contracts.js';
import type { BlockRecord } from '../../../../src/node/execution/blocks.js';
import { intrinsicGas, runContractTx } from '../../../../src/vm/executor.js';
import { compileContract } from '../../../../src/vm/runtime.js';
import { prepareModule } from '../../../../src/vm/prepare.js';
import { TrieState } from '../../../helpers/trie-state.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../../../helpers/wat.js';

const ALICE = '0x' + 'a1'.repeat(20);
const CAP = 30_000_000n;
const test = suite('contract reader estimateGas');

/** Reverts unless gas_left() ≥ `threshold` when it starts: cheap to run, expensive to search for. */
function gate(threshold: bigint): Uint8Array {
  return wat(`(module ${HOST_IMPORTS} (memory (export "memory") 1)
    (func (export "go") (if (i64.lt_u (call $gas_left) (i64.const ${threshold})) (then (call $revert (i32.const 0) (i32.const 4))))))`);
}

/** A reader over a real TrieState and the real VM, counting the VM runs and the gas limits they were given. */
async function readerWith(code: Uint8Array): Promise<{ reader: ContractReader; to: string; runs: bigint[]; used: { gas: bigint }; block: BlockRecord }> {
  const chain = await TrieState.open({ [ALICE]: 10n ** 20n });
  const deployed = runContractTx(chain.view, { from: ALICE, to: null, value: 0n, data: deployData(code), gasLimit: CAP, nonce: 0n, blockNumber: 1, timestampMs: 1_700_000_000_000 });
  assert.is(deployed.status, 1, deployed.error);
  const runs: bigint[] = [];
  const used = { gas: 0n };
  const backend: ContractBackend = {
    stateView: () => Promise.resolve(chain.view),
    proof: () => Promise.reject(new Error('no proofs here')),
    run: (view, ctx) => {
      runs.push(ctx.gasLimit);
      const r = runContractTx(view, ctx);
      used.gas += r.gasUsed;
      return r;
    },
    intrinsicGas,
  };
  const block = { hash: '0x' + '00'.repeat(32), index: 1, timestamp: 1_700_000_000_000 } as BlockRecord;
  return { reader: new ContractReader(backend, CAP), to: deployed.contractAddress!, runs, used, block };
}

test('a contract that needs a high gas_left is estimated in at most ESTIMATE_MAX_RUNS runs, within 1.5%, and the answer succeeds', async () => {
  for (const threshold of [25_000_000n, 9_000_000n, 50_000n]) {
    const { reader, to, runs, block } = await readerWith(gate(threshold));
    const req = { from: ALICE, to, value: 0n, data: callData('go') };
    const estimate = await reader.estimateGas(block, req);
    assert.ok(runs.length <= ESTIMATE_MAX_RUNS, `${threshold}: ${runs.length} runs`);
    runs.length = 0;
    const at = await reader.call(block, { ...req, gas: estimate });
    assert.is(at.status, 1, `${threshold}: the estimate ${estimate} succeeds`);
    // The least limit that succeeds is about threshold + intrinsic gas + the frame's compilation and
    // instantiation (charged before the code runs); the answer is above it by at most the tolerance.
    const frame = compileContract(prepareModule(gate(threshold)).stored);
    const least = threshold + intrinsicGas(to, req.data) + frame.compileGas + frame.instantiationGas;
    assert.ok(estimate >= least - 100n, `${threshold}: estimate ${estimate} is not below the least limit ${least}`);
    assert.ok(estimate * 1_000n <= least * 1_016n, `${threshold}: estimate ${estimate} is within 1.5% of ${least}`);
  }
});

/** Reverts unless gas_left() ≥ `threshold`, then burns all the gas it has: every passing run costs its whole limit. */
function gateThenBurn(threshold: bigint): Uint8Array {
  return wat(`(module ${HOST_IMPORTS} (memory (export "memory") 1)
    (func (export "go") (if (i64.lt_u (call $gas_left) (i64.const ${threshold})) (then (call $revert (i32.const 0) (i32.const 4))))
      (loop $l (br_if $l (i64.gt_u (call $gas_left) (i64.const 2000))))))`);
}

test('a contract that burns whatever gas it is given: the runs together use at most the budget plus one run', async () => {
  const { reader, to, used, block } = await readerWith(gateThenBurn(2_000_000n));
  const estimate = await reader.estimateGas(block, { from: ALICE, to, value: 0n, data: callData('go') });
  assert.ok(used.gas <= (ESTIMATE_GAS_BUDGET_CAPS + 1n) * CAP, `all runs used ${used.gas} gas`);
  assert.is((await reader.call(block, { from: ALICE, to, value: 0n, data: callData('go'), gas: estimate })).status, 1, 'the answer succeeds');
});

test('a call that succeeds with the gas it used is answered in two runs', async () => {
  const { reader, to, runs, block } = await readerWith(wat(`(module ${HOST_IMPORTS} (memory (export "memory") 1) (func (export "go")))`));
  const estimate = await reader.estimateGas(block, { from: ALICE, to, value: 0n, data: callData('go') });
  assert.is(runs.length, 2);
  assert.is(runs[0], CAP, 'first at the cap');
  assert.is(runs[1], estimate, 'then at the gas that run used');
});

test.run();
