/** Flags and parsers shared by the `svc bridge` commands: token amounts, durations, chains as a devnet directory or URLs. */
import { Flags } from '@oclif/core';
import { WEI_PER_TOKEN } from '../core/constants.js';
import { SvcError } from '../core/errors.js';
import { runningDevnet } from '../devnet/manifest.js';
import { type ChainSpec, parseChainSpec } from '../client/bridge-ops.js';
import { UsageError } from './base.js';

/** `--password-file` of a second wallet (the relayer's on the source chain). */
export const sourcePasswordFileFlag = Flags.string({ description: 'password file of the --source-from wallet (default: --password-file, else SVC_PASSWORD)' });

/** `--gas-price`: wei; default the chain's minimum. */
export const bridgeGasPriceFlag = Flags.string({ description: "gas price in wei (default: the chain's minimum from its genesis, else 1 gwei)" });

/** Tokens with up to 18 decimals ("5", "0.25") as wei; USAGE otherwise. */
export function parseTokens(value: string, flag = '--amount'): bigint {
  const m = /^(0|[1-9][0-9]{0,59})(?:\.([0-9]{1,18}))?$/.exec(value.trim());
  if (!m) throw new UsageError(`${flag} must be a token amount like 5 or 0.25 (at most 18 decimals), got ${JSON.stringify(value)}`);
  return BigInt(m[1]!) * WEI_PER_TOKEN + BigInt((m[2] ?? '').padEnd(18, '0'));
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration such as 90s, 10m, 2h, 1d or plain seconds, as whole seconds; USAGE otherwise. */
export function parseDuration(value: string, flag: string): number {
  const m = /^([1-9][0-9]{0,8})([smhd]?)$/.exec(value.trim());
  if (!m) throw new UsageError(`${flag} must be a duration like 90s, 10m, 2h or 1d, got ${JSON.stringify(value)}`);
  return Number(m[1]) * UNIT_SECONDS[m[2] || 's']!;
}

/** Wei from a base-10 flag value; USAGE otherwise. */
export function parseWei(value: string | undefined, flag: string): bigint | undefined {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,77})$/.test(value)) throw new UsageError(`${flag} must be a base-10 amount of wei, got ${JSON.stringify(value)}`);
  return BigInt(value);
}

/**
 * A chain from a flag (devnet directory or BEACON_URL,EXECUTION_URL); without one, `fallback`
 * ('running': the devnet other commands target, 'counterpart': the counterpart that devnet's
 * manifest records). NO_CHAIN when neither is there.
 */
export async function chainFromFlag(value: string | undefined, flag: string, fallback: 'running' | 'counterpart'): Promise<ChainSpec> {
  if (value !== undefined) return parseChainSpec(value, flag);
  const m = runningDevnet();
  if (m && fallback === 'running') return parseChainSpec(m.dir, flag);
  if (m && fallback === 'counterpart' && m.counterpart) return parseChainSpec(m.counterpart.dir, flag);
  throw new SvcError('NO_CHAIN', `${flag} is required: no running devnet${fallback === 'counterpart' ? ' with a counterpart' : ''} to default to (pass a devnet directory or BEACON_URL,EXECUTION_URL)`);
}
