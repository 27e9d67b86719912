import { Flags } from '@oclif/core';
import { readFile } from 'node:fs/promises';
import { SvcCommand, UsageError } from '../../cli/base.js';
import { formatTokens } from '../../cli/format.js';
import { parseAddress } from '../../core/codec/json.js';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { LightClientError, pinnedValidatorsFromJson, type TrustedValidator } from '../../core/light/types.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { verifyLight } from '../../client/light.js';

export default class LightVerify extends SvcCommand {
  static override summary = 'Verify the latest finalized header (and an account balance) from a beacon node as a light client';
  static override description =
    'Trusts only the genesis file (or a finalized --checkpoint root, with the genesis validator set or a pinned --validators set): checks the finality update\'s signed votes from at least 2/3 of the trusted active stake, the header chain back towards the trusted block, and with --account the account proof against the finalized header\'s state_root. Any failed check exits non-zero naming it (docs/light-client.md).';
  static override examples = [
    '<%= config.bin %> light verify --genesis ~/.svc/devnet/genesis/genesis.json --beacon http://127.0.0.1:8080 --account 0xe8d00ff9844c4d1f09091fac56cf7164bb9f9fee',
    '<%= config.bin %> light verify --genesis genesis.json --beacon http://127.0.0.1:8080 --checkpoint 0x… --json',
  ];
  static override flags = {
    genesis: Flags.string({ description: 'genesis file of the chain (the root of trust)', required: true }),
    beacon: Flags.string({ description: 'beacon node URL', required: true }),
    account: Flags.string({ description: '0x address whose balance to prove against the finalized header' }),
    checkpoint: Flags.string({ description: 'start from this finalized block root instead of genesis (weak subjectivity: see docs/light-client.md)' }),
    validators: Flags.string({ description: 'with --checkpoint: JSON file of the validator set at the checkpoint, from a source you trust (default: the genesis set; format in docs/light-client.md)', dependsOn: ['checkpoint'] }),
  };

  async run() {
    const { flags } = await this.parse(LightVerify);
    const genesis = await loadGenesisFile(flags.genesis);
    const account = flags.account === undefined ? undefined : toHex(parseAddress(flags.account, '--account'));
    const checkpoint = flags.checkpoint === undefined ? undefined : toHex(parseHex(flags.checkpoint, '--checkpoint', 32));
    const validators = flags.validators === undefined ? undefined : await loadPinnedValidators(flags.validators);
    let v;
    try {
      v = await verifyLight({ genesis, beaconUrl: flags.beacon, ...(account === undefined ? {} : { account }), ...(checkpoint === undefined ? {} : { checkpoint }), ...(validators === undefined ? {} : { validators }) });
    } catch (err) {
      // The check's code leads the message, so the failure names what failed on one line.
      if (err instanceof LightClientError) throw new SvcError(err.code, `light client check failed (${err.code}): ${err.message}`);
      throw err;
    }
    const f = v.finalized;
    this.say(`Chain           ${v.chainId}, trusted from ${v.trusted.source} (block ${v.trusted.index}, ${v.trusted.root}), ${v.trusted.set === 'pinned' ? 'pinned' : 'genesis'} validator set`);
    this.say(`Set changes     ${v.setChanges} followed, each signed by the set before it`);
    this.say(`Finalized       epoch ${f.epoch}, block ${f.index} ${f.hash}`);
    this.say(`Signed by       ${f.signers} validators, stake ${f.signedStake} of ${f.activeStake} active (update ${f.updateBytes} bytes)`);
    this.say(`Ancestry        ${v.ancestry.headers} headers linked back to block ${v.ancestry.lowest}${v.ancestry.reachesTrusted ? ' (reaches the trusted block)' : ''}`);
    this.say(`State root      ${f.stateRoot} (post-state of block ${f.index - 1}, named by the finalized header)`);
    if (v.account) {
      this.say(`Account         ${v.account.address}`);
      this.say(`Balance         ${formatTokens(v.account.balance)} tokens (${v.account.balance} wei), verified`);
      this.say(`Nonce           ${v.account.nonce}`);
    }
    return v;
  }
}

/** Reads `--validators FILE`: the pinned validator set (docs/light-client.md, "Pinned validator set"). */
async function loadPinnedValidators(path: string): Promise<Map<number, TrustedValidator>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read the validator set --validators ${path}: ${(err as Error).message}`);
  }
  return pinnedValidatorsFromJson(json, '--validators');
}
