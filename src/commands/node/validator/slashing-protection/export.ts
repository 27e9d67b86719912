import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand } from '../../../../cli/base.js';
import { genesisHash } from '../../../../core/genesis/genesis.js';
import { loadGenesisFile } from '../../../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../../../cli/flags.js';
import { openValidatorDataDir } from '../../../../node/validator/data-dir.js';
import { writeFileAtomic } from '../../../../util/fs.js';

export default class SlashingProtectionExport extends SvcCommand {
  static override summary = 'Export the validator slashing-protection history as an EIP-3076 interchange file (format v5)';
  static override description =
    'Run it while the validator client is stopped (the database is locked while the client runs). genesis_validators_root is the genesis hash, so the file is only importable for the same chain. Without --out the interchange is printed on stdout.';
  static override examples = [
    '<%= config.bin %> node validator slashing-protection export --data-dir ./devnet/validator-0 --genesis ./devnet/genesis.json --out interchange.json',
  ];
  static override flags = {
    'data-dir': Flags.string({ description: 'validator data directory', required: true }),
    genesis: genesisFlag,
    out: Flags.string({ description: 'write the interchange to this file (mode 0600) instead of stdout' }),
    force: Flags.boolean({ description: 'overwrite --out if it exists', default: false }),
  };

  async run() {
    const { flags } = await this.parse(SlashingProtectionExport);
    const genesis = await loadGenesisFile(resolve(flags.genesis ?? defaultGenesisPath()));
    const db = await openValidatorDataDir(resolve(flags['data-dir']), genesis, { create: false });
    let doc;
    try {
      doc = await db.exportInterchange(genesisHash(genesis));
    } finally {
      await db.close();
    }
    const summary = {
      genesis_validators_root: doc.metadata.genesis_validators_root,
      validators: doc.data.length,
      blocks: doc.data.reduce((n, r) => n + r.signed_blocks.length, 0),
      attestations: doc.data.reduce((n, r) => n + r.signed_attestations.length, 0),
    };
    if (flags.out) {
      const out = resolve(flags.out);
      await writeFileAtomic(out, JSON.stringify(doc, null, 2) + '\n', { force: flags.force });
      this.say(`Exported ${summary.validators} validator(s), ${summary.blocks} block and ${summary.attestations} attestation record(s) to ${out}`);
      return { file: out, ...summary };
    }
    this.say(JSON.stringify(doc, null, 2));
    return doc;
  }
}
