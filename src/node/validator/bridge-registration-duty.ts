/**
 * The validator's side of counterpart registration (docs/bridge.md "Who may register"): with an
 * operator's policy (`--bridge-accept-counterparts FILE`, naming the counterparts to accept by
 * chain id and genesis hash, each with an optional most allowance), every bridge pass lists the
 * registration requests its beacon holds, signs with every key those whose terms the policy
 * accepts, and posts the signatures back. Without a policy it signs nothing: registering a
 * counterpart trusts its validators with the allowance, which only an operator may decide.
 */
import { readFile } from 'node:fs/promises';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { HASH_BYTES } from '../../core/constants.js';
import { SvcError } from '../../core/errors.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import type { MlDsaKeyPair } from '../../core/crypto/mldsa.js';
import { signRegistration } from '../../core/bridge/registration.js';
import type { RegistrationRequestView } from '../../api/bridge.js';
import type { BridgeBeaconClient } from '../../client/bridge.js';
import type { Logger } from '../../util/log.js';
import type { ValidatorMetrics } from './metrics.js';

/** One counterpart an operator accepts. */
export interface AcceptedCounterpart {
  chainId: string;
  /** 0x, lowercase. */
  genesisHash: string;
  /** Wei; absent: any allowance. */
  maxAllowance?: bigint;
}

/** Why a policy file is refused. */
export class RegistrationPolicyError extends SvcError {
  constructor(message: string) {
    super('BRIDGE_POLICY_INVALID', message);
  }
}

/**
 * Parses a policy document: `{"counterparts": [{"chain_id", "genesis_hash", "max_allowance"?}]}`
 * (max_allowance base-10 wei). Unknown fields are refused: a typo must not widen what is signed.
 */
export function parseRegistrationPolicy(text: string, file: string): AcceptedCounterpart[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RegistrationPolicyError(`${file}: not JSON (${(err as Error).message})`);
  }
  const o = raw as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o) || !Array.isArray(o.counterparts) || Object.keys(o).some((k) => k !== 'counterparts')) {
    throw new RegistrationPolicyError(`${file}: expected {"counterparts": [{"chain_id", "genesis_hash", "max_allowance"?}, ...]}`);
  }
  return o.counterparts.map((c, i) => {
    const e = c as Record<string, unknown> | null;
    const at = `${file}: counterparts[${i}]`;
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw new RegistrationPolicyError(`${at} is not an object`);
    for (const k of Object.keys(e)) if (!['chain_id', 'genesis_hash', 'max_allowance'].includes(k)) throw new RegistrationPolicyError(`${at}: unknown field ${k}`);
    if (typeof e.chain_id !== 'string' || e.chain_id.length === 0) throw new RegistrationPolicyError(`${at}.chain_id must be a chain id`);
    let hash: string;
    try {
      hash = toHex(parseHex(e.genesis_hash, 'genesis_hash', HASH_BYTES));
    } catch {
      throw new RegistrationPolicyError(`${at}.genesis_hash must be 0x and 64 hex digits`);
    }
    const max = e.max_allowance;
    if (max !== undefined && (typeof max !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(max))) throw new RegistrationPolicyError(`${at}.max_allowance must be a base-10 integer of wei`);
    return { chainId: e.chain_id, genesisHash: hash, ...(max !== undefined ? { maxAllowance: BigInt(max) } : {}) };
  });
}

/** Reads a policy file (`--bridge-accept-counterparts`). */
export async function readRegistrationPolicy(file: string): Promise<AcceptedCounterpart[]> {
  const text = await readFile(file, 'utf8').catch((err: Error) => {
    throw new RegistrationPolicyError(`cannot read --bridge-accept-counterparts ${file} (${err.message})`);
  });
  return parseRegistrationPolicy(text, file);
}

/** Why a policy refuses a request, or undefined when it accepts it for a chain of genesis hash `self`. */
export function policyRefusal(policy: readonly AcceptedCounterpart[], r: RegistrationRequestView, self: string): string | undefined {
  if (r.terms.chain.toLowerCase() !== self) return `it is for chain ${r.terms.chain}, not this one`;
  const c = policy.find((p) => p.genesisHash === r.terms.counterpart.toLowerCase());
  if (!c) return `the policy does not name ${r.terms.counterpart_chain_id} (${r.terms.counterpart})`;
  if (c.chainId !== r.terms.counterpart_chain_id) return `the policy names ${r.terms.counterpart} as ${c.chainId}, the request as ${r.terms.counterpart_chain_id}`;
  if (c.maxAllowance !== undefined && BigInt(r.terms.allowance) > c.maxAllowance) return `allowance ${r.terms.allowance} wei is above the policy's ${c.maxAllowance}`;
  return undefined;
}

/** Signs the registration requests a validator's policy accepts. */
export class RegistrationSigning {
  private readonly self: string;
  private readonly refused = new Set<string>();

  constructor(
    private readonly opts: {
      genesis: Genesis;
      policy: readonly AcceptedCounterpart[];
      beacon: BridgeBeaconClient;
      log: Logger;
      metrics: ValidatorMetrics;
    },
  ) {
    this.self = toHex(genesisHash(opts.genesis));
  }

  /** One pass: lists the beacon's requests and signs (with every key not yet in a request's signatures) those the policy accepts. */
  async run(signers: ReadonlyArray<{ index: number; key: MlDsaKeyPair }>): Promise<void> {
    const requests = await this.opts.beacon.registrations();
    for (const r of requests) {
      const why = policyRefusal(this.opts.policy, r, this.self);
      if (why !== undefined) {
        if (!this.refused.has(r.id)) this.opts.log.warn('refusing to sign a counterpart registration', { registration: r.id, counterpart: r.terms.counterpart_chain_id, reason: why });
        this.refused.add(r.id);
        continue;
      }
      const have = new Set(r.signatures.map((s) => s.validator_index));
      const terms = {
        chain: parseHex(r.terms.chain, 'chain', HASH_BYTES),
        counterpart: parseHex(r.terms.counterpart, 'counterpart', HASH_BYTES),
        counterpartChainId: r.terms.counterpart_chain_id,
        validatorSet: parseHex(r.terms.validator_set, 'validator_set', HASH_BYTES),
        allowance: BigInt(r.terms.allowance),
      };
      for (const { index, key } of signers) {
        if (have.has(index)) continue;
        const s = signRegistration(terms, index, key, this.opts.genesis.chain_id);
        this.opts.metrics.signed('bridge_registration');
        try {
          await this.opts.beacon.postRegistrationSignature(r.id, { validator_index: index, signature: toHex(s.signature) });
          this.opts.log.info('counterpart registration signed', { registration: r.id, counterpart: r.terms.counterpart_chain_id, allowance: r.terms.allowance, validator_index: index });
        } catch (err) {
          this.opts.log.warn('counterpart registration signature not accepted', { registration: r.id, validator_index: index, code: (err as { code?: string }).code ?? null, error: (err as Error).message });
        }
      }
    }
  }
}
