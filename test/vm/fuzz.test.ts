/**
 * Mutated modules: the reader and the validator either accept a module or refuse it with a
 * ContractModuleError (never another exception, never a hang), and whatever they accept the
 * rewrite turns into a module the engine accepts and the VM runs to a receipt.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ContractModuleError } from '../../src/vm/errors.js';
import { runContractTx } from '../../src/vm/executor.js';
import { instrument } from '../../src/vm/instrument.js';
import { validateModule } from '../../src/vm/validate.js';
import { Rng } from '../helpers/fuzz.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData } from '../helpers/wat.js';
import { CALLER, COUNTER, FORWARDER } from './contracts.js';

const ALICE = '0x' + 'a1'.repeat(20);
const test = suite('vm fuzz');
const SEED = Number(process.env.SVC_FUZZ_SEED ?? 20261124);
const ROUNDS = 1500;

function mutate(rng: Rng, base: Uint8Array): Uint8Array {
  const out = base.slice();
  const kind = rng.int(0, 3);
  if (kind === 3) return out.subarray(0, rng.int(0, out.length - 1));
  for (let n = rng.int(1, 4); n > 0; n--) {
    const i = rng.int(8, out.length - 1);
    out[i] = kind === 0 ? rng.int(0, 255) : kind === 1 ? out[i]! ^ (1 << rng.int(0, 7)) : rng.pick([0x00, 0x0b, 0x40, 0x7f, 0x7e, 0x7d, 0x80, 0xff]);
  }
  return out;
}

test(`${ROUNDS} mutated modules: refused with a typed error, or accepted, rewritten and run (seed ${SEED})`, async () => {
  const rng = new Rng(SEED);
  let accepted = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const code = mutate(rng, rng.pick([COUNTER, CALLER, FORWARDER]));
    let stored: Uint8Array;
    try {
      stored = instrument(validateModule(code));
    } catch (err) {
      if (!(err instanceof ContractModuleError)) assert.unreachable(`round ${round}: ${(err as Error).constructor.name}: ${(err as Error).message}`);
      continue;
    }
    accepted++;
    assert.ok(WebAssembly.validate(stored), `round ${round}: stored form invalid`);
    const state = (await TrieState.open({ [ALICE]: 10n ** 20n })).view;
    const d = runContractTx(state, { from: ALICE, to: null, value: 0n, data: deployData(code), gasLimit: 30_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0 });
    if (d.status !== 1) continue;
    for (const method of ['increment', 'get', 'fwd', 'call_it', 'spin']) {
      const r = runContractTx(state, { from: ALICE, to: d.contractAddress, value: 0n, data: callData(method), gasLimit: 1_000_000n, nonce: 1n, blockNumber: 1, timestampMs: 0 });
      assert.ok(r.status === 0 || r.status === 1);
    }
  }
  assert.ok(accepted >= 10, `only ${accepted} mutations kept the module valid: the rewrite is hardly exercised`);
});

test.run();
