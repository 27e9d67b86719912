/**
 * Counterpart registration requests on a real beacon and execution pair (docs/bridge.md "Who may
 * register"): bad bodies, ids and signatures are refused with a 4xx envelope naming the field or
 * the rule (wrong domain, unknown, exited or slashed signer, another request's terms); a request
 * is listed, gathers its validators' signatures (202 added, 200 already held) with their stake,
 * and a validator client's policy signs exactly the requests it names.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { genesisHash } from '../../../../src/core/genesis/genesis.js';
import { registrationTerms, signRegistration } from '../../../../src/core/bridge/registration.js';
import { signBid } from '../../../../src/core/bridge/types.js';
import { BridgeBeaconClient } from '../../../../src/client/bridge.js';
import { RegistrationSigning, parseRegistrationPolicy, policyRefusal } from '../../../../src/node/validator/bridge-registration-duty.js';
import { ValidatorMetrics } from '../../../../src/node/validator/metrics.js';
import { silentLogger } from '../../../../src/util/log.js';
import { filled } from '../../../helpers/assert.js';
import { testChain } from '../../../helpers/bridge.js';
import { expectEnvelope } from '../../execution/fixture.js';
import { bget, bpost, okData, startHarness, stopHarness } from '../fixture.js';

const X = testChain('svc-bridge-x', 5);
const Z = testChain('svc-bridge-z', 7);
const ALLOWANCE = 10n ** 21n;

test('registration requests: bad input is refused by name; signatures are verified and summed; a policy signs only what it names', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 4 });
  try {
    const self = genesisHash(h.genesis);
    assert.equal(okData(await bget(h, '/api/v1/bridge/registrations')), { registrations: [] });
    // Bodies.
    for (const [body, field] of [
      [null, 'body'],
      [[], 'body'],
      [{ genesis: X.genesis }, 'allowance'],
      [{ genesis: X.genesis, allowance: 5 }, 'allowance'],
      [{ genesis: X.genesis, allowance: '-1' }, 'allowance'],
      [{ genesis: X.genesis, allowance: '01' }, 'allowance'],
      [{ genesis: X.genesis, allowance: (1n << 256n).toString() }, 'allowance'],
      [{ genesis: 'x', allowance: '1' }, 'genesis'],
      [{ genesis: X.genesis, allowance: '1', extra: 1 }, 'extra'],
    ] as const) {
      expectEnvelope(await bpost(h, '/api/v1/bridge/registrations', body), 400, 'MALFORMED_INPUT', new RegExp(`^malformed ${field}`));
    }
    expectEnvelope(await bpost(h, '/api/v1/bridge/registrations', { genesis: { chain_id: 5 }, allowance: '1' }), 400, 'BRIDGE_COUNTERPART_INVALID');
    expectEnvelope(await bpost(h, '/api/v1/bridge/registrations', { genesis: h.genesis, allowance: '1' }), 400, 'BRIDGE_COUNTERPART_INVALID', /own genesis/);
    const text = await fetch(`${h.beacon.url}/api/v1/bridge/registrations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"genesis": {' });
    assert.is(text.status, 400);

    // A request, then again: the same one (200).
    const created = okData(await bpost(h, '/api/v1/bridge/registrations', { genesis: X.genesis, allowance: ALLOWANCE.toString() }), 202);
    const terms = registrationTerms(self, X.genesis, X.hash, ALLOWANCE);
    assert.equal(created.terms, { chain: toHex(self), counterpart: toHex(X.hash), counterpart_chain_id: X.genesis.chain_id, validator_set: toHex(terms.validatorSet), allowance: ALLOWANCE.toString() });
    assert.equal(created.signatures, []);
    assert.is(okData(await bpost(h, '/api/v1/bridge/registrations', { genesis: X.genesis, allowance: ALLOWANCE.toString() })).id, created.id);
    const path = `/api/v1/bridge/registrations/${created.id}/signatures`;

    // Ids and signatures.
    expectEnvelope(await bget(h, '/api/v1/bridge/registrations/0x12'), 400, 'MALFORMED_INPUT', /^malformed registration/);
    expectEnvelope(await bget(h, `/api/v1/bridge/registrations/0x${'ab'.repeat(32)}`), 404, 'UNKNOWN_REGISTRATION');
    expectEnvelope(await bpost(h, `/api/v1/bridge/registrations/0x${'ab'.repeat(32)}/signatures`, { validator_index: 0, signature: toHex(filled(3309, 1)) }), 404, 'UNKNOWN_REGISTRATION');
    for (const [body, field] of [
      [{ validator_index: 0 }, 'signature'],
      [{ validator_index: 0, signature: '0x1234' }, 'signature'],
      [{ validator_index: -1, signature: toHex(filled(3309, 1)) }, 'validator_index'],
      [{ validator_index: 0, signature: toHex(filled(3309, 1)), more: 1 }, 'more'],
    ] as const) {
      expectEnvelope(await bpost(h, path, body), 400, 'MALFORMED_INPUT', new RegExp(`^malformed ${field}`));
    }
    const key = (i: number) => h.validators[i]!.mldsa;
    // Wrong domain (a BID signature over the id), another request's terms, an unknown signer, a garbage signature.
    expectEnvelope(await bpost(h, path, { validator_index: 0, signature: toHex(signBid(filled(32, 1), 0, key(0), h.genesis.chain_id).signature) }), 400, 'BRIDGE_BAD_SIGNATURE');
    const other = registrationTerms(self, X.genesis, X.hash, ALLOWANCE + 1n);
    expectEnvelope(await bpost(h, path, { validator_index: 0, signature: toHex(signRegistration(other, 0, key(0), h.genesis.chain_id).signature) }), 400, 'BRIDGE_BAD_SIGNATURE');
    expectEnvelope(await bpost(h, path, { validator_index: 7, signature: toHex(signRegistration(terms, 0, key(0), h.genesis.chain_id).signature) }), 400, 'BRIDGE_UNKNOWN_SIGNER');
    expectEnvelope(await bpost(h, path, { validator_index: 1, signature: toHex(filled(3309, 0xff)) }), 400, 'BRIDGE_BAD_SIGNATURE');
    // Validator 0 signs: 202, then 200 for the same signature; half of the stake.
    const s0 = { validator_index: 0, signature: toHex(signRegistration(terms, 0, key(0), h.genesis.chain_id).signature) };
    let view = okData(await bpost(h, path, s0), 202);
    assert.is(view.signatures.length, 1);
    assert.is(BigInt(view.signed_stake) * 2n, BigInt(view.active_stake));
    okData(await bpost(h, path, s0), 200);

    // An exited or slashed validator's signature is refused (the registry as execution reports it).
    const registry = h.beacon.chain.bridge.registrations as unknown as { registry: () => Array<{ active: boolean; slashed: boolean }> };
    const real = registry.registry;
    const s1 = { validator_index: 1, signature: toHex(signRegistration(terms, 1, key(1), h.genesis.chain_id).signature) };
    for (const change of [{ active: false }, { active: false, slashed: true }]) {
      registry.registry = () => real().map((e, i) => (i === 1 ? { ...e, ...change } : e));
      expectEnvelope(await bpost(h, path, s1), 400, 'BRIDGE_UNKNOWN_SIGNER');
    }
    registry.registry = real;

    // A validator client's policy: Z is not named, X is (with a cap the request is within).
    okData(await bpost(h, '/api/v1/bridge/registrations', { genesis: Z.genesis, allowance: '1' }), 202);
    const policy = parseRegistrationPolicy(JSON.stringify({ counterparts: [{ chain_id: X.genesis.chain_id, genesis_hash: toHex(X.hash), max_allowance: ALLOWANCE.toString() }] }), 'policy.json');
    const signing = new RegistrationSigning({ genesis: h.genesis, policy, beacon: new BridgeBeaconClient(h.beacon.url), log: silentLogger, metrics: new ValidatorMetrics() });
    await signing.run([{ index: 1, key: key(1) }]);
    const list = okData(await bget(h, '/api/v1/bridge/registrations')).registrations;
    const byChain = Object.fromEntries(list.map((r: { terms: { counterpart_chain_id: string }; signatures: unknown[] }) => [r.terms.counterpart_chain_id, r.signatures.length]));
    assert.equal(byChain, { [X.genesis.chain_id]: 2, [Z.genesis.chain_id]: 0 });
    view = okData(await bget(h, `/api/v1/bridge/registrations/${created.id}`));
    assert.is(view.signed_stake, view.active_stake);
  } finally {
    await stopHarness(h);
  }
});

test('registration policy files: bad documents are refused by name; a request is refused unless named, for this chain, within the cap', () => {
  const hash = toHex(X.hash);
  for (const [text, why] of [
    ['nope', /not JSON/],
    ['[]', /expected/],
    ['{"counterparts": [], "x": 1}', /expected/],
    ['{"counterparts": [{"chain_id": "a"}]}', /genesis_hash/],
    [`{"counterparts": [{"chain_id": "a", "genesis_hash": "${hash}", "max_allowance": 5}]}`, /max_allowance/],
    [`{"counterparts": [{"chain_id": "a", "genesis_hash": "${hash}", "colour": 1}]}`, /unknown field colour/],
  ] as const) {
    assert.throws(() => parseRegistrationPolicy(text, 'p.json'), (e: Error & { code?: string }) => e.code === 'BRIDGE_POLICY_INVALID' && why.test(e.message));
  }
  const policy = parseRegistrationPolicy(JSON.stringify({ counterparts: [{ chain_id: X.genesis.chain_id, genesis_hash: hash.toUpperCase().replace('0X', '0x'), max_allowance: '10' }] }), 'p.json');
  const self = `0x${'11'.repeat(32)}`;
  const req = (o: Partial<{ chain: string; counterpart: string; counterpart_chain_id: string; allowance: string }>) => ({
    id: '0x',
    terms: { chain: self, counterpart: hash, counterpart_chain_id: X.genesis.chain_id, validator_set: '0x', allowance: '10', ...o },
    genesis_json: '',
    signatures: [],
    signed_stake: '0',
    active_stake: '0',
  });
  assert.is(policyRefusal(policy, req({}), self), undefined);
  assert.match(policyRefusal(policy, req({ allowance: '11' }), self)!, /above the policy/);
  assert.match(policyRefusal(policy, req({ chain: `0x${'22'.repeat(32)}` }), self)!, /not this one/);
  assert.match(policyRefusal(policy, req({ counterpart: toHex(Z.hash) }), self)!, /does not name/);
  assert.match(policyRefusal(policy, req({ counterpart_chain_id: 'svc-other' }), self)!, /names/);
});

test.run();
