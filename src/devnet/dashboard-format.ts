/**
 * Text helpers for the devnet dashboard. Kept apart from the ink component so plain-text output
 * (logs, a non-TTY mode) and tests can use them without loading ink or React.
 */
import { WEI_PER_TOKEN } from '../core/constants.js';
import type { DevnetView, ProcessStatus } from './view.js';

/** Colour names the dashboard uses, a subset of what ink's `<Text color>` accepts. */
export type DashboardColor = 'green' | 'yellow' | 'red' | 'gray';

/** Digits of the wei amount after the decimal point that formatBalance keeps by default. */
export const BALANCE_DECIMALS = 4;

/**
 * Wei (base-10 string or bigint) as tokens with `decimals` places, truncated rather than rounded:
 * "1500000000000000000" → "1.5000"; a non-zero amount below the last place → "<0.0001".
 */
export function formatBalance(wei: string | bigint, decimals: number = BALANCE_DECIMALS): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 18) throw new RangeError(`decimals must be an integer in 0..18, got ${decimals}`);
  // BigInt() alone would also accept "0x10", " 7 " and "" (as 0), which are not wei strings.
  if (typeof wei === 'string' && !/^[0-9]+$/.test(wei)) throw new RangeError(`not a base-10 wei amount: ${JSON.stringify(wei)}`);
  const v = BigInt(wei);
  if (v < 0n) throw new RangeError(`negative wei amount: ${v}`);
  const whole = v / WEI_PER_TOKEN;
  const frac = (v % WEI_PER_TOKEN).toString().padStart(18, '0').slice(0, decimals);
  const text = decimals > 0 ? `${whole}.${frac}` : `${whole}`;
  // Truncating dust to "0.0000" would claim an empty account; say how small it is instead.
  if (v > 0n && whole === 0n && /^0*$/.test(frac)) return `<${decimals > 0 ? `0.${'0'.repeat(decimals - 1)}1` : '1'}`;
  return text;
}

/** A root or hash cut to "0x" and its first `hexDigits` digits plus "…"; short strings unchanged. */
export function shortHash(hash: string, hexDigits = 8): string {
  const prefix = hash.startsWith('0x') ? 2 : 0;
  return hash.length <= prefix + hexDigits + 1 ? hash : `${hash.slice(0, prefix + hexDigits)}…`;
}

/** An address as "0x1234…abcd" (first and last four hex digits); short strings unchanged. */
export function shortAddress(address: string): string {
  const prefix = address.startsWith('0x') ? 2 : 0;
  return address.length <= prefix + 9 ? address : `${address.slice(0, prefix + 4)}…${address.slice(-4)}`;
}

/**
 * "HH:MM:SS" of an ISO 8601 time, in UTC so it matches the timestamps in the process log files;
 * "--:--:--" when the string is not a date.
 */
export function clockTime(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? '--:--:--' : new Date(ms).toISOString().slice(11, 19);
}

/** The colour of a process status: healthy green, starting/restarting yellow, crashed/failed red, stopped grey. */
export function statusColor(status: ProcessStatus): DashboardColor {
  switch (status) {
    case 'healthy':
      return 'green';
    case 'starting':
    case 'restarting':
      return 'yellow';
    case 'crashed':
    case 'failed':
      return 'red';
    case 'stopped':
      return 'gray';
  }
}

/** Whether a process needs the user's attention (its log path is then shown in full). */
export function isDown(status: ProcessStatus): boolean {
  return status === 'crashed' || status === 'failed';
}

/** "3 pending / 1 queued", or "unreachable" while the execution node does not answer. */
export function mempoolText(mempool: DevnetView['mempool']): string {
  return mempool === null ? 'unreachable' : `${mempool.pending} pending / ${mempool.queued} queued`;
}

/** What the status line of a node shows; the dashboard's NodeView and `status --json`'s nodes[] both fit it. */
export interface NodeSummary {
  role: 'producer' | 'follower';
  validators: readonly number[];
  head: { slot: number; index: number; root: string } | null;
  finalized_epoch: number | null;
  peers: { beacon: number | null; execution: number | null };
}

/**
 * "producer (validators 0, 2)  head slot 12 · height 11 · 0x1234abcd…  finalized epoch 2  peers 2 beacon / 2 execution";
 * a follower says "read-only"; an unknown figure is "?".
 */
export function nodeStatusText(n: NodeSummary): string {
  const role = n.role === 'follower' ? 'read-only' : `producer (validators ${n.validators.join(', ') || 'none'})`;
  const head = n.head ? `head slot ${n.head.slot} · height ${n.head.index} · ${shortHash(n.head.root)}` : 'head unknown';
  const num = (v: number | null) => (v === null ? '?' : String(v));
  return `${role}  ${head}  finalized epoch ${num(n.finalized_epoch)}  peers ${num(n.peers.beacon)} beacon / ${num(n.peers.execution)} execution`;
}
