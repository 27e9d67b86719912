/**
 * Which validator processes a devnet runs (`--validator-processes`), and whether a resumed devnet
 * may change it. The choice decides where slashing protection lives: a packed process keeps one
 * database for all of its node's keys (DIR/data/validator, which `svc node all` uses too, and
 * DIR/data/node-I/validator), a process per validator one per key (DIR/data/validator-<address>).
 * Resuming with the other layout would start validators without the history of what they signed,
 * so a devnet keeps the layout its validator data is in, and a flag asking for the other one is
 * refused. The one exception is `svc node all` (--single-process), which adopts per-key
 * directories into its shared one itself (renaming them `<dir>.adopted`).
 */
import { existsSync } from 'node:fs';
import type { Genesis } from '../core/genesis/genesis.js';
import { type DevnetLayout, nodeValidatorsDataDir, validatorDataDir } from './layout.js';
import { DevnetError, type ValidatorProcesses } from './manifest.js';
import { MAX_DEVNET_NODES } from './topology.js';

/** The validator data already in a devnet directory: its layout, and for `per-node` how many nodes held validators. */
export interface ValidatorData {
  layout: ValidatorProcesses;
  /** Producing nodes whose packed data directory exists (`per-node` only). */
  producers: number;
}

/** Reads which validator data directories exist; undefined when none does (nothing to protect yet). */
export function existingValidatorData(layout: DevnetLayout, g: Pick<Genesis, 'validators'>): ValidatorData | undefined {
  let producers = 0;
  while (producers < MAX_DEVNET_NODES && existsSync(nodeValidatorsDataDir(layout, producers))) producers += 1;
  const perValidator = g.validators.some((v) => existsSync(validatorDataDir(layout, v.address)));
  if (producers > 0 && perValidator) {
    throw new DevnetError('DEVNET_MISMATCH', `${layout.dir} holds validator data in both layouts (data/validator and data/validator-<address>): slashing protection would be split; start over with --fresh`);
  }
  if (producers > 0) return { layout: 'per-node', producers };
  return perValidator ? { layout: 'per-validator', producers: 0 } : undefined;
}

/** Inputs of the choice: the flags and what the directory already holds. */
export interface PackingChoice {
  /** `--validator-processes`, when given. */
  flag?: ValidatorProcesses;
  singleProcess: boolean;
  producers: number;
  /** The validator data found in the directory (undefined for a new chain or one whose validators never ran). */
  existing?: ValidatorData;
  dir: string;
}

/**
 * The validator processes of this `up`: the flag, else the existing data's layout, else one
 * process per producing node. Single-process mode runs `svc node all`, whose one validator client
 * holds every key with node 0's packed data directory (`per-node`), and adopts per-key
 * directories itself. Refuses another change of layout on existing data, and a packed devnet
 * resumed with another number of producing nodes (validators would move to a process whose
 * database lacks their history).
 */
export function chooseValidatorProcesses(c: PackingChoice): ValidatorProcesses {
  if (c.singleProcess && c.flag === 'per-validator') {
    throw new DevnetError('USAGE', '--single-process runs every validator in one client (svc node all); --validator-processes per-validator needs one process per layer');
  }
  const wanted: ValidatorProcesses = c.singleProcess ? 'per-node' : (c.flag ?? c.existing?.layout ?? 'per-node');
  const have = c.existing;
  if (!have) return wanted;
  // svc node all merges the per-key histories into its shared database before signing anything.
  if (c.singleProcess && have.layout === 'per-validator') return wanted;
  const resume = `resume it without --validator-processes${c.singleProcess ? ' and --single-process' : ''}, or start over with --fresh`;
  if (have.layout !== wanted) {
    const what = have.layout === 'per-node' ? 'one validator process per node (slashing protection in data/validator)' : 'one validator process per validator (slashing protection in data/validator-<address>)';
    const asked = c.singleProcess ? '--single-process' : `--validator-processes ${wanted}`;
    throw new DevnetError('DEVNET_MISMATCH', `${c.dir} runs ${what}; ${asked} would start its validators without their slashing-protection history: ${resume}`);
  }
  if (have.layout === 'per-node' && have.producers !== c.producers) {
    throw new DevnetError('DEVNET_MISMATCH', `${c.dir} packs its validators into the processes of ${have.producers} producing node(s); --nodes ${c.producers} would move validators away from their slashing-protection history: resume it with --nodes ${have.producers}, or start over with --fresh`);
  }
  return wanted;
}
