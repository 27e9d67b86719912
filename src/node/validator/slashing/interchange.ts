/**
 * The EIP-3076 interchange format (version 5) of the slashing-protection database, and the record
 * and key identities the database and the file share: strict parsing of a whole file, and the
 * export of one key's state as "one entry at each watermark plus every message above them".
 */
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { rejectUnknownKeys, requireObject } from '../../../core/codec/json.js';
import { HASH_BYTES, PUBLIC_KEY_BYTES } from '../../../core/constants.js';
import { sha3 } from '../../../core/crypto/hash.js';
import { MalformedError } from '../../../core/errors.js';
import { ValidatorError } from '../errors.js';

/** The only interchange version this database reads and writes. */
export const INTERCHANGE_FORMAT_VERSION = '5';

/** EIP-3076 interchange, version 5 (numbers are base-10 strings, as the EIP requires). */
export interface InterchangeV5 {
  metadata: { interchange_format_version: '5'; genesis_validators_root: string };
  data: InterchangeRecord[];
}

/** One validator's history in an interchange file. */
export interface InterchangeRecord {
  pubkey: string;
  signed_blocks: Array<{ slot: string; signing_root?: string }>;
  signed_attestations: Array<{ source_epoch: string; target_epoch: string; signing_root?: string }>;
}

/** A signed block header, as the database holds it. */
export interface BlockRecord {
  slot: number;
  /** Lowercase 0x hex, or null when unknown (imported without a root). */
  root: string | null;
}

/** A signed attestation, as the database holds it. */
export interface AttRecord {
  source: number;
  target: number;
  root: string | null;
}

/** A validator key as the database identifies it. */
export interface ParsedKey {
  /** SHA3-256 of the key, hex without 0x: the storage id. */
  id: string;
  pubkey: string;
  address: string;
}

/** One key's watermarks and the records held above (and at) them, as the export reads them. */
export interface KeyHistory {
  pubkey: string;
  slotMark: number | null;
  sourceMark: number | null;
  targetMark: number | null;
  /** slot → records. */
  blocks: ReadonlyMap<number, readonly BlockRecord[]>;
  /** target epoch → records. */
  atts: ReadonlyMap<number, readonly AttRecord[]>;
}

/** One key's records in a parsed file (duplicate entries for the key merged). */
export interface ParsedEntry {
  key: ParsedKey;
  blocks: BlockRecord[];
  atts: AttRecord[];
}

const ZERO_ROOT = '0x' + '00'.repeat(HASH_BYTES);
const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;

/** Parses a 1,952-byte ML-DSA-65 public key into its storage id and address. */
export function parsePubkey(value: unknown, field: string): ParsedKey {
  const bytes = parseHex(value, field, PUBLIC_KEY_BYTES);
  const id = sha3(bytes);
  return { id: toHex(id).slice(2), pubkey: toHex(bytes), address: toHex(id.slice(HASH_BYTES - 20)) };
}

/** Parses a 32-byte root (bytes or hex) into lowercase 0x hex. */
export function parseRoot(value: Uint8Array | string, field: string): string {
  if (value instanceof Uint8Array) {
    if (value.length !== HASH_BYTES) throw new MalformedError(field, `expected ${HASH_BYTES} bytes, got ${value.length}`);
    return toHex(value);
  }
  return toHex(parseHex(value, field, HASH_BYTES));
}

/**
 * A key's history as an interchange entry: one entry at each watermark (with its signing root
 * when exactly that message is known, else without, which EIP-3076 treats as "something was
 * signed here"), then every message above the watermarks.
 */
export function exportKey(st: KeyHistory): InterchangeRecord {
  const withRoot = <T extends object>(entry: T, root: string | null): T & { signing_root?: string } => (root === null ? entry : { ...entry, signing_root: root });
  const signed_blocks: InterchangeRecord['signed_blocks'] = [];
  if (st.slotMark !== null) {
    const L = st.slotMark;
    const atMark = st.blocks.get(L) ?? [];
    // Several or rootless records at the watermark (conflicting imports) become one rootless entry.
    signed_blocks.push(withRoot({ slot: String(L) }, atMark.length === 1 ? atMark[0]!.root : null));
    const above = [...st.blocks.keys()].filter((s) => s > L).sort((a, b) => a - b);
    for (const s of above) for (const r of st.blocks.get(s)!) signed_blocks.push(withRoot({ slot: String(s) }, r.root));
  }
  const signed_attestations: InterchangeRecord['signed_attestations'] = [];
  if (st.targetMark !== null && st.sourceMark !== null) {
    const S = st.sourceMark;
    const T = st.targetMark;
    const atMark = st.atts.get(T) ?? [];
    const exact = atMark.length === 1 && atMark[0]!.source === S ? atMark[0]!.root : null;
    // The entry at (S, T) carries both watermarks: an importer refuses targets <= T, and any
    // source < S with a target > T would surround it.
    signed_attestations.push(withRoot({ source_epoch: String(S), target_epoch: String(T) }, exact));
    const above = [...st.atts.keys()].filter((t) => t > T).sort((a, b) => a - b);
    for (const t of above) {
      for (const r of st.atts.get(t)!) signed_attestations.push(withRoot({ source_epoch: String(r.source), target_epoch: String(r.target) }, r.root));
    }
  }
  return { pubkey: st.pubkey, signed_blocks, signed_attestations };
}

function decimalField(value: unknown, field: string): number {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) throw new MalformedError(field, 'expected a base-10 integer string');
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new MalformedError(field, 'exceeds 2^53 - 1');
  return n;
}

function rootField(value: unknown, field: string): string | null {
  if (value === undefined) return null;
  const root = toHex(parseHex(value, field, HASH_BYTES));
  // EIP-3076 suggests the zero root as the "unknown" placeholder; no real signing root is zero.
  return root === ZERO_ROOT ? null : root;
}

/** Strictly validates a whole interchange document (object or JSON text); duplicate pubkeys are merged. */
export function parseInterchange(json: unknown, gvr: string): Map<string, ParsedEntry> {
  let doc = json;
  if (typeof json === 'string') {
    try {
      doc = JSON.parse(json);
    } catch {
      throw new MalformedError('interchange', 'not valid JSON');
    }
  }
  const o = requireObject(doc, 'interchange');
  rejectUnknownKeys(o, ['metadata', 'data'], 'interchange');
  const meta = requireObject(o.metadata, 'interchange.metadata');
  rejectUnknownKeys(meta, ['interchange_format_version', 'genesis_validators_root'], 'interchange.metadata');
  if (meta.interchange_format_version !== INTERCHANGE_FORMAT_VERSION) {
    throw new MalformedError('interchange.metadata.interchange_format_version', `expected "${INTERCHANGE_FORMAT_VERSION}", got ${JSON.stringify(meta.interchange_format_version) ?? 'nothing'}`);
  }
  const fileRoot = toHex(parseHex(meta.genesis_validators_root, 'interchange.metadata.genesis_validators_root', HASH_BYTES));
  if (fileRoot !== gvr) throw new ValidatorError('GENESIS_MISMATCH', `interchange is for genesis validators root ${fileRoot}, not ${gvr}`);
  if (!Array.isArray(o.data)) throw new MalformedError('interchange.data', 'expected an array');
  const out = new Map<string, ParsedEntry>();
  o.data.forEach((item, i) => {
    const f = `interchange.data[${i}]`;
    const e = requireObject(item, f);
    rejectUnknownKeys(e, ['pubkey', 'signed_blocks', 'signed_attestations'], f);
    const key = parsePubkey(e.pubkey, `${f}.pubkey`);
    if (!Array.isArray(e.signed_blocks)) throw new MalformedError(`${f}.signed_blocks`, 'expected an array');
    if (!Array.isArray(e.signed_attestations)) throw new MalformedError(`${f}.signed_attestations`, 'expected an array');
    const entry = out.get(key.id) ?? { key, blocks: [], atts: [] };
    e.signed_blocks.forEach((b, j) => {
      const bf = `${f}.signed_blocks[${j}]`;
      const bo = requireObject(b, bf);
      rejectUnknownKeys(bo, ['slot', 'signing_root'], bf);
      entry.blocks.push({ slot: decimalField(bo.slot, `${bf}.slot`), root: rootField(bo.signing_root, `${bf}.signing_root`) });
    });
    e.signed_attestations.forEach((a, j) => {
      const af = `${f}.signed_attestations[${j}]`;
      const ao = requireObject(a, af);
      rejectUnknownKeys(ao, ['source_epoch', 'target_epoch', 'signing_root'], af);
      entry.atts.push({
        source: decimalField(ao.source_epoch, `${af}.source_epoch`),
        target: decimalField(ao.target_epoch, `${af}.target_epoch`),
        root: rootField(ao.signing_root, `${af}.signing_root`),
      });
    });
    out.set(key.id, entry);
  });
  return out;
}
