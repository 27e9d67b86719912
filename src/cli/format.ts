/** Human output helpers: token amounts and plain-text tables. */
import { WEI_PER_TOKEN } from '../core/constants.js';
import type { TxStatus } from '../api/execution.js';

/** Wei as tokens with 18 decimals, trailing zeros dropped: 10000000000000000000 → "10", 1500000000000000000 → "1.5". */
export function formatTokens(wei: bigint | string): string {
  const v = BigInt(wei);
  const sign = v < 0n ? '-' : '';
  const abs = v < 0n ? -v : v;
  const whole = abs / WEI_PER_TOKEN;
  const frac = (abs % WEI_PER_TOKEN).toString().padStart(18, '0').replace(/0+$/, '');
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/** "10 tokens (10000000000000000000 wei)". */
export function formatAmount(wei: bigint | string): string {
  const tokens = formatTokens(wei);
  return `${tokens} ${tokens === '1' ? 'token' : 'tokens'} (${BigInt(wei)} wei)`;
}

/** Left-aligned columns separated by two spaces; the header row first. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** Human lines for an included transaction's block and receipt (`tx status`, `tx send --wait`). */
export function receiptLines(s: TxStatus): string[] {
  const lines = [`State:     ${s.state}`];
  if (s.block) lines.push(`Block:     ${s.block.number} (${s.block.hash})`);
  const r = s.receipt;
  if (r) {
    lines.push(`Result:    ${r.status === 1 ? 'success' : `failed${r.error ? `: ${r.error}` : ''}`}`);
    lines.push(`Gas used:  ${r.gasUsed}`);
    lines.push(`Fee:       ${r.fee} wei (gas price ${r.effectiveGasPrice} wei)`);
  }
  return lines;
}
