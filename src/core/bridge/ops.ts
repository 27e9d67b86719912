/**
 * Bridge operations as transaction data (docs/bridge.md "Operations"): a one-byte op code, then
 * the operation's SSZ payload (types.ts). Decoding refuses every structural fault with a
 * MalformedError naming `bridge.*`, so the rules (verify.ts, set-update.ts) see typed values only.
 * Pure: no I/O.
 */
import { MalformedError } from '../errors.js';
import type { FinalityUpdate } from '../light/types.js';
import {
  BridgeOp,
  type LockBody,
  LockBodySsz,
  type RegisterBody,
  RegisterBodySsz,
  type ReleaseBody,
  ReleaseBodySsz,
  type SetUpdateBody,
  SetUpdateBodySsz,
  type SettleBody,
  SettleBodySsz,
} from './types.js';

/** A decoded bridge operation. */
export type BridgeOperation =
  | { op: typeof BridgeOp.Register; body: RegisterBody }
  | { op: typeof BridgeOp.Lock; body: LockBody }
  | { op: typeof BridgeOp.Release; body: ReleaseBody }
  | { op: typeof BridgeOp.Refund; body: SettleBody }
  | { op: typeof BridgeOp.Complete; body: SettleBody }
  | { op: typeof BridgeOp.UpdateSet; body: SetUpdateBody };

/** Encodes an operation as transaction data. */
export function encodeBridgeOp(o: BridgeOperation): Uint8Array {
  let body: Uint8Array;
  switch (o.op) {
    case BridgeOp.Register:
      body = RegisterBodySsz.serialize(o.body);
      break;
    case BridgeOp.Lock:
      body = LockBodySsz.serialize(o.body);
      break;
    case BridgeOp.Release:
      body = ReleaseBodySsz.serialize(o.body);
      break;
    case BridgeOp.Refund:
    case BridgeOp.Complete:
      body = SettleBodySsz.serialize(o.body);
      break;
    case BridgeOp.UpdateSet:
      body = SetUpdateBodySsz.serialize(o.body);
      break;
  }
  const out = new Uint8Array(1 + body.length);
  out[0] = o.op;
  out.set(body, 1);
  return out;
}

function safe(n: number, field: string): number {
  if (!Number.isSafeInteger(n)) throw new MalformedError(field, 'integers must be below 2^53');
  return n;
}

function checkUpdateIntegers(u: FinalityUpdate, field: string): void {
  safe(u.finalized.epoch, `${field}.finalized.epoch`);
  safe(u.target.epoch, `${field}.target.epoch`);
  safe(u.header.index, `${field}.header.index`);
  safe(u.header.timestampMs, `${field}.header.timestamp`);
  u.attestations.forEach((a, i) => {
    safe(a.validatorIndex, `${field}.attestations[${i}].validator_index`);
    safe(a.data.slot, `${field}.attestations[${i}].data.slot`);
    safe(a.data.source.epoch, `${field}.attestations[${i}].data.source.epoch`);
    safe(a.data.target.epoch, `${field}.attestations[${i}].data.target.epoch`);
  });
}

/** Decodes transaction data sent to BRIDGE_ADDRESS; every structural fault is a MalformedError naming `bridge.*`. */
export function decodeBridgeOp(data: Uint8Array): BridgeOperation {
  if (data.length === 0) throw new MalformedError('bridge.op', 'empty data: expected an op code byte');
  const op = data[0]!;
  const body = data.subarray(1);
  const de = <T>(what: string, f: () => T): T => {
    try {
      return f();
    } catch (err) {
      throw new MalformedError(`bridge.${what}`, (err as Error).message);
    }
  };
  switch (op) {
    case BridgeOp.Register: {
      const b = de('register', () => RegisterBodySsz.deserialize(body));
      if (b.genesisJson.length === 0) throw new MalformedError('bridge.register.genesis_json', 'expected the counterpart genesis document');
      b.signatures.forEach((s, i) => safe(s.validatorIndex, `bridge.register.signatures[${i}].validator_index`));
      return { op, body: b };
    }
    case BridgeOp.Lock: {
      const b = de('lock', () => LockBodySsz.deserialize(body));
      safe(b.timeout, 'bridge.lock.timeout');
      return { op, body: b };
    }
    case BridgeOp.Release: {
      const b = de('release', () => ReleaseBodySsz.deserialize(body));
      safe(b.bid.timeout, 'bridge.release.bid.timeout');
      checkUpdateIntegers(b.proof.update, 'bridge.release.proof.update');
      b.signatures.forEach((s, i) => safe(s.validatorIndex, `bridge.release.signatures[${i}].validator_index`));
      return { op, body: b };
    }
    case BridgeOp.Refund:
    case BridgeOp.Complete: {
      const what = op === BridgeOp.Refund ? 'refund' : 'complete';
      const b = de(what, () => SettleBodySsz.deserialize(body));
      safe(b.bid.timeout, `bridge.${what}.bid.timeout`);
      checkUpdateIntegers(b.proof.update, `bridge.${what}.proof.update`);
      return { op, body: b };
    }
    case BridgeOp.UpdateSet: {
      const b = de('update_set', () => SetUpdateBodySsz.deserialize(body));
      checkUpdateIntegers(b.finality, 'bridge.update_set.finality');
      b.registry.entries.forEach((e, i) => {
        if (e.index !== i) throw new MalformedError(`bridge.update_set.registry.entries[${i}].index`, `expected ${i}: a registry proof carries every entry in index order`);
      });
      return { op, body: b };
    }
    default:
      throw new MalformedError('bridge.op', `unknown op code ${op} (1 register, 2 lock, 3 release, 4 refund, 5 complete, 6 update_set)`);
  }
}
