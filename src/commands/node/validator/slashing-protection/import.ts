import { Args, Flags } from '@oclif/core';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SvcCommand } from '../../../../cli/base.js';
import { SvcError } from '../../../../core/errors.js';
import { genesisHash } from '../../../../core/genesis/genesis.js';
import { loadGenesisFile } from '../../../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../../../cli/flags.js';
import { openValidatorDataDir } from '../../../../node/validator/data-dir.js';

export default class SlashingProtectionImport extends SvcCommand {
  static override summary = 'Merge an EIP-3076 interchange file (format v5) into the validator slashing-protection history';
  static override description =
    'Run it while the validator client is stopped. The whole file is checked first (and refused if it is for another genesis); records are added and watermarks only rise, so importing the same file twice changes nothing.';
  static override examples = [
    '<%= config.bin %> node validator slashing-protection import interchange.json --data-dir ./devnet/validator-0 --genesis ./devnet/genesis.json',
  ];
  static override args = { file: Args.string({ description: 'EIP-3076 interchange JSON file', required: true }) };
  static override flags = {
    'data-dir': Flags.string({ description: 'validator data directory', required: true }),
    genesis: genesisFlag,
  };

  async run() {
    const { args, flags } = await this.parse(SlashingProtectionImport);
    const genesis = await loadGenesisFile(resolve(flags.genesis ?? defaultGenesisPath()));
    const file = resolve(args.file);
    const text = await readFile(file, 'utf8').catch(() => {
      throw new SvcError('FILE_UNREADABLE', `cannot read interchange file ${file}`);
    });
    const db = await openValidatorDataDir(resolve(flags['data-dir']), genesis);
    let summary;
    try {
      summary = await db.importInterchange(text, genesisHash(genesis));
    } finally {
      await db.close();
    }
    this.say(`Imported ${file}: ${summary.validators} validator(s), ${summary.blocksAdded} new block and ${summary.attestationsAdded} new attestation record(s)`);
    return { file, validators: summary.validators, blocks_added: summary.blocksAdded, attestations_added: summary.attestationsAdded };
  }
}
