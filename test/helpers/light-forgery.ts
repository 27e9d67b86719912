/**
 * The checkpoint forgery of issue 32 for light-client tests: a lying beacon that serves the real
 * checkpoint header with its own one-key validator set, and a "finalized" child of the checkpoint
 * signed by that key whose state gives an account a forged balance, with the headers and proof to
 * match. A client that took the set from the beacon proves the forged balance. Not a test file.
 */
import { toHex } from '../../src/core/codec/bytes.js';
import { addressHexFromPublicKey } from '../../src/core/crypto/address.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, accountKey, encodeAccountValue, trieProof, trieRoot } from '../../src/core/state/trie.js';
import { attestationToJson, signAttestation } from '../../src/core/types/attestation.js';
import { blockHash, headerFromJson, headerToJson } from '../../src/core/types/block.js';
import type { Answer, Tamper } from './tamper-proxy.js';

/** What the liar sells: 10¹² tokens. */
export const FORGED_BALANCE = 10n ** 12n * 10n ** 18n;

/** The tamper (bootstrap, finality update) and own answers (headers, proof) of the forgery for `account` on `chainId`. */
export function checkpointForgery(o: { chainId: string; slotsPerEpoch: number; account: string }): { tamper: Tamper; answer: Answer } {
  const liar = keygenFromSeed(new Uint8Array(32).fill(0x42));
  const liarSet = [{ index: 0, address: addressHexFromPublicKey(liar.publicKey), public_key: toHex(liar.publicKey), stake: (32n * 10n ** 18n).toString(), active: true }];
  const entries = [[accountKey(o.account), encodeAccountValue({ balance: FORGED_BALANCE, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT })] as const];
  const stateRoot = trieRoot(entries);
  let child: ReturnType<typeof headerToJson> | undefined;
  const tamper: Tamper = (path, d) => {
    if (path === '/api/v1/light/bootstrap' && d.header) {
      // The real header (its hash is the checkpoint), the liar's set; and the liar's child of it.
      const cp = headerFromJson(d.header);
      child = headerToJson({ ...cp, index: cp.index + 1, parentHash: blockHash(cp), stateRoot });
      return { ...d, validators: liarSet };
    }
    if (path === '/api/v1/light/finality_update' && child) {
      const root = blockHash(headerFromJson(child));
      const epoch = 1_000;
      const target = { epoch: epoch + 1, root: new Uint8Array(32).fill(0x99) };
      const att = signAttestation(0, { slot: (epoch + 1) * o.slotsPerEpoch, beaconBlockRoot: target.root, source: { epoch, root }, target }, liar, o.chainId);
      return { ...d, finalized: { epoch, root: toHex(root) }, target: { epoch: target.epoch, root: toHex(target.root) }, header: child, attestations: [attestationToJson(att)], participation: '0x01', signers: 1 };
    }
    return d;
  };
  const answer: Answer = (path) => {
    if (!child) return undefined;
    if (path === '/api/v1/light/headers') return { status: 200, body: { success: true, data: { headers: [child] } } };
    if (path === '/api/v1/light/proof') {
      const proof = {
        address: o.account,
        stateRoot: toHex(stateRoot),
        balance: FORGED_BALANCE.toString(),
        nonce: 0,
        codeHash: toHex(EMPTY_CODE_HASH),
        storageHash: toHex(EMPTY_TRIE_ROOT),
        accountProof: trieProof(entries, accountKey(o.account)).map(toHex),
        storageProof: [],
      };
      return { status: 200, body: { success: true, data: { block_hash: toHex(blockHash(headerFromJson(child))), header: child, proof } } };
    }
    return undefined;
  };
  return { tamper, answer };
}
