/**
 * Light-client objects (docs/light-client.md): the trusted validator set, finality updates,
 * header chains and account proofs, decoded from their wire JSON (src/api/light.ts) strictly, so
 * every verifier works on typed bytes. Pure: no I/O.
 */
import { HASH_BYTES, PUBLIC_KEY_BYTES } from '../constants.js';
import { bytesEqual, parseHex } from '../codec/bytes.js';
import { parseDecimal, parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { MalformedError, SvcError } from '../errors.js';
import type { Genesis } from '../genesis/genesis.js';
import { type Attestation, type Checkpoint, attestationFromJson } from '../types/attestation.js';
import { type BlockHeader, headerFromJson } from '../types/block.js';

/** What a light-client check found wrong; `code` names the check (docs/light-client.md lists them). */
export class LightClientError extends SvcError {
  constructor(code: LightErrorCode, message: string) {
    super(code, message);
  }
}

/** Machine codes of the light-client checks. */
export type LightErrorCode =
  | 'LIGHT_MALFORMED'
  | 'LIGHT_WRONG_CHAIN'
  | 'LIGHT_CHECKPOINT_MISMATCH'
  | 'LIGHT_NONCANONICAL'
  | 'LIGHT_HEADER_MISMATCH'
  | 'LIGHT_NOT_FINALIZING_LINK'
  | 'LIGHT_DUPLICATE_SIGNER'
  | 'LIGHT_UNKNOWN_SIGNER'
  | 'LIGHT_BAD_SIGNATURE'
  | 'LIGHT_BITFIELD_MISMATCH'
  | 'LIGHT_INSUFFICIENT_STAKE'
  | 'LIGHT_STALE_UPDATE'
  | 'LIGHT_ANCESTRY_BROKEN'
  | 'LIGHT_PROOF_INVALID';

/** One validator of the trusted set. */
export interface TrustedValidator {
  index: number;
  publicKey: Uint8Array;
  stake: bigint;
  active: boolean;
}

/** What a light client trusts: the chain, a finalised block, and the validator set it checks signatures against. */
export interface TrustedState {
  chainId: string;
  slotsPerEpoch: number;
  /** Root of the trusted (finalised) block: genesis, or a root the user supplies. */
  root: Uint8Array;
  /** Its header (absent for genesis, which has none). */
  header?: BlockHeader;
  /** Its epoch (0 for genesis): a set change or finality update must be newer. */
  epoch?: number;
  /** By index. */
  validators: ReadonlyMap<number, TrustedValidator>;
}

/**
 * A finality update: the finalised checkpoint's header plus the signed votes of the link that
 * finalised it (source = that checkpoint, target = the next epoch's checkpoint, as the beacon's
 * fork choice finalises), and a participation bitfield over validator indices.
 */
export interface FinalityUpdate {
  finalized: Checkpoint;
  target: Checkpoint;
  header: BlockHeader;
  attestations: Attestation[];
  /** Bit i (byte i >> 3, bit i & 7, least significant first) set iff validator i signed. */
  participation: Uint8Array;
}

/** The trusted set genesis names: every genesis validator, active, with its stake. */
export function trustedFromGenesis(genesis: Genesis, root: Uint8Array): TrustedState {
  return {
    chainId: genesis.chain_id,
    slotsPerEpoch: genesis.config.slots_per_epoch,
    root,
    validators: new Map(genesis.validators.map((v) => [v.index, { index: v.index, publicKey: parseHex(v.public_key, `genesis.validators[${v.index}].public_key`, PUBLIC_KEY_BYTES), stake: BigInt(v.stake), active: true }])),
  };
}

/** Bits of a finality update's participation bitfield over `validators`: one per index 0 … highest index. */
export function bitfieldSize(validators: ReadonlyMap<number, TrustedValidator>): number {
  let n = 0;
  for (const i of validators.keys()) n = Math.max(n, i + 1);
  return n;
}

/** Whether two validator sets are the same: the same indices, each with the same key, stake and activity. */
export function sameValidatorSet(a: ReadonlyMap<number, TrustedValidator>, b: ReadonlyMap<number, TrustedValidator>): boolean {
  if (a.size !== b.size) return false;
  for (const [i, v] of a) {
    const w = b.get(i);
    if (!w || w.stake !== v.stake || w.active !== v.active || !bytesEqual(w.publicKey, v.publicKey)) return false;
  }
  return true;
}

/**
 * Parses a pinned validator set (`svc light verify --validators FILE`, docs/light-client.md): the
 * array a bootstrap answer's `validators` holds, bare or as the `validators` of an object (so a
 * saved bootstrap `data` object serves as well). At least one validator.
 */
export function pinnedValidatorsFromJson(input: unknown, field = 'validators'): Map<number, TrustedValidator> {
  const list = Array.isArray(input) ? input : requireObject(input, field).validators;
  const set = validatorsFromJson(list, field);
  if (set.size === 0) throw new MalformedError(field, 'the set is empty');
  return set;
}

/** Parses a served validator set (a non-genesis bootstrap); duplicates are malformed. */
export function validatorsFromJson(input: unknown, field = 'validators'): Map<number, TrustedValidator> {
  if (!Array.isArray(input)) throw new MalformedError(field, 'expected an array');
  const out = new Map<number, TrustedValidator>();
  input.forEach((raw, i) => {
    const f = `${field}[${i}]`;
    const o = requireObject(raw, f);
    rejectUnknownKeys(o, ['index', 'address', 'public_key', 'stake', 'active'], f);
    const index = parseUint(o.index, `${f}.index`);
    if (out.has(index)) throw new MalformedError(`${f}.index`, `validator ${index} listed twice`);
    if (typeof o.active !== 'boolean') throw new MalformedError(`${f}.active`, 'expected a boolean');
    out.set(index, { index, publicKey: parseHex(o.public_key, `${f}.public_key`, PUBLIC_KEY_BYTES), stake: parseDecimal(o.stake, `${f}.stake`, 256), active: o.active });
  });
  return out;
}

function checkpointFromJson(input: unknown, field: string): Checkpoint {
  const o = requireObject(input, field);
  rejectUnknownKeys(o, ['epoch', 'root'], field);
  return { epoch: parseUint(o.epoch, `${field}.epoch`), root: parseHex(o.root, `${field}.root`, HASH_BYTES) };
}

/** Strictly parses a finality update's wire JSON (informational fields such as sizes are ignored). */
export function finalityUpdateFromJson(input: unknown): FinalityUpdate {
  const o = requireObject(input, 'finality_update');
  if (!Array.isArray(o.attestations)) throw new MalformedError('finality_update.attestations', 'expected an array');
  return {
    finalized: checkpointFromJson(o.finalized, 'finality_update.finalized'),
    target: checkpointFromJson(o.target, 'finality_update.target'),
    header: headerFromJson(o.header, 'finality_update.header'),
    attestations: o.attestations.map((a) => attestationFromJson(a)),
    participation: parseHex(o.participation, 'finality_update.participation'),
  };
}

/** Strictly parses a list of header JSON objects. */
export function headersFromJson(input: unknown, field = 'headers'): BlockHeader[] {
  if (!Array.isArray(input)) throw new MalformedError(field, 'expected an array');
  return input.map((h, i) => headerFromJson(h, `${field}[${i}]`));
}

/** Runs a parser, turning its MalformedError into LIGHT_MALFORMED naming what the server sent. */
export function parseServed<T>(what: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof MalformedError) throw new LightClientError('LIGHT_MALFORMED', `${what}: ${err.message}`);
    throw err;
  }
}
