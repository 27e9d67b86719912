/**
 * Registration requests on one beacon (docs/bridge.md "Who may register"): someone who wants a
 * counterpart registered posts its genesis document and an allowance; this chain's validator
 * clients list the requests, sign those their operator's policy accepts, and post their
 * signatures back; the requester collects them and sends the register operation, which execution
 * judges on its own registry. The beacon only gathers: it verifies each signature (so the list
 * holds nothing a validator did not sign) but decides nothing. Held in memory, bounded: a request
 * lost to a restart is posted again, and the validators sign it again.
 */
import { bytesEqual, parseHex, toHex, utf8 } from '../../../core/codec/bytes.js';
import { canonicalJson, genesisHash } from '../../../core/genesis/genesis.js';
import type { Genesis } from '../../../core/genesis/genesis.js';
import { type BidSignature, BridgeError } from '../../../core/bridge/types.js';
import { parseCounterpart } from '../../../core/bridge/verify.js';
import { type RegistrationTerms, registrationId, registrationTerms, verifyRegistrationSignature } from '../../../core/bridge/registration.js';
import type { RegistrationRequestView } from '../../../api/bridge.js';
import type { RegistryEntry } from '../../../api/execution.js';
import { BeaconError } from '../errors.js';
import { bidStake } from './view.js';

/** Most requests a beacon holds; the oldest is dropped past it. */
export const MAX_REGISTRATION_REQUESTS = 16;

interface Request {
  id: string;
  terms: RegistrationTerms;
  genesisJson: string;
  signatures: Map<number, Uint8Array>;
}

/** The registration requests one beacon gathers signatures for. */
export class RegistrationRequests {
  private readonly requests = new Map<string, Request>();
  private readonly self: Uint8Array;

  constructor(
    private readonly genesis: Genesis,
    private readonly registry: () => readonly RegistryEntry[],
  ) {
    this.self = genesisHash(genesis);
  }

  /** Holds a request (or returns the one already held for the same terms); BRIDGE_COUNTERPART_INVALID for a bad document. */
  request(counterpart: unknown, allowance: bigint): { added: boolean; view: RegistrationRequestView } {
    const { genesis, hash } = parseCounterpart(utf8(canonicalJson(counterpart)), this.self);
    const terms = registrationTerms(this.self, genesis, hash, allowance);
    const id = toHex(registrationId(terms));
    const known = this.requests.get(id);
    if (known) return { added: false, view: this.view(known) };
    const r: Request = { id, terms, genesisJson: canonicalJson(genesis), signatures: new Map() };
    this.requests.set(id, r);
    if (this.requests.size > MAX_REGISTRATION_REQUESTS) this.requests.delete(this.requests.keys().next().value!);
    return { added: true, view: this.view(r) };
  }

  /** The requests held, newest first. */
  list(): RegistrationRequestView[] {
    return [...this.requests.values()].reverse().map((r) => this.view(r));
  }

  /** One request; 404 UNKNOWN_REGISTRATION when not held. */
  get(id: string): RegistrationRequestView {
    return this.view(this.find(id));
  }

  /**
   * Adds a validator's signature over a request's terms: the signer an active, unslashed validator
   * (BRIDGE_UNKNOWN_SIGNER) and the signature valid under Domain.BridgeRegistration and this chain's
   * id (BRIDGE_BAD_SIGNATURE). `added` is false when that validator's signature was held already.
   */
  addSignature(id: string, s: BidSignature): { added: boolean; view: RegistrationRequestView } {
    const r = this.find(id);
    const held = r.signatures.get(s.validatorIndex);
    if (held && bytesEqual(held, s.signature)) return { added: false, view: this.view(r) };
    const v = this.registry()[s.validatorIndex];
    if (!v || !v.active || v.slashed) throw new BridgeError('BRIDGE_UNKNOWN_SIGNER', `validator ${s.validatorIndex} is not an active validator of this chain`);
    if (!verifyRegistrationSignature(r.terms, s, parseHex(v.public_key, 'public_key'), this.genesis.chain_id)) {
      throw new BridgeError('BRIDGE_BAD_SIGNATURE', `the signature of validator ${s.validatorIndex} does not verify over registration ${id} (domain svc/bridge-registration/v1, chain ${this.genesis.chain_id})`);
    }
    r.signatures.set(s.validatorIndex, s.signature);
    return { added: true, view: this.view(r) };
  }

  private find(id: string): Request {
    const r = this.requests.get(id.toLowerCase());
    if (!r) throw new BeaconError('UNKNOWN_REGISTRATION', `no registration request ${id} on this beacon (post it to POST /api/v1/bridge/registrations)`);
    return r;
  }

  private view(r: Request): RegistrationRequestView {
    const signers = [...r.signatures.keys()].sort((a, b) => a - b);
    const { signed, active } = bidStake(this.registry(), signers);
    const t = r.terms;
    return {
      id: r.id,
      terms: { chain: toHex(t.chain), counterpart: toHex(t.counterpart), counterpart_chain_id: t.counterpartChainId, validator_set: toHex(t.validatorSet), allowance: t.allowance.toString() },
      genesis_json: r.genesisJson,
      signatures: signers.map((i) => ({ validator_index: i, signature: toHex(r.signatures.get(i)!) })),
      signed_stake: signed.toString(),
      active_stake: active.toString(),
    };
  }
}
