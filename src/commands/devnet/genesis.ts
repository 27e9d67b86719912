import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand } from '../../cli/base.js';
import { readPassword } from '../../cli/secrets.js';
import { DEVNET_PASSWORD } from '../../genesis/build.js';
import { DEFAULT_ACCOUNTS, DEVNET_KDF_MEMORY_KIB } from '../../devnet/lifecycle.js';
import { type GenesisStepResult, runGenesisStep } from '../../devnet/export/genesis-step.js';
import { PRESETS } from '../../core/genesis/genesis.js';

export default class DevnetGenesis extends SvcCommand {
  static override summary = 'The genesis step of an exported network: write its genesis, keystores and every node\'s P2P key';
  static override description =
    'Run by the genesis service (Compose) or Job (Kubernetes) that svc devnet export writes, with the same flags as the export: the result (genesis hash, peer ids) is then the one the exported bootnode lists name. Running it again on the same directory keeps the keystores and rewrites the same keys; a directory holding another chain is refused (GENESIS_MISMATCH).';
  static override examples = ['<%= config.bin %> devnet genesis --validators 4 --nodes 2 --followers 1 --genesis-time 1767225600 --out ./genesis'];
  static override flags = {
    validators: Flags.integer({ description: 'number of validators', required: true }),
    nodes: Flags.integer({ description: 'producing nodes', required: true }),
    followers: Flags.integer({ description: 'read-only nodes', default: 0 }),
    accounts: Flags.integer({ description: 'prefunded accounts', default: DEFAULT_ACCOUNTS, min: 0, max: 1000 }),
    'slot-time': Flags.integer({ description: `seconds per slot (default ${PRESETS.devnet.slot_seconds})`, min: 1, max: 3600 }),
    'slots-per-epoch': Flags.integer({ description: `slots per epoch (default ${PRESETS.devnet.slots_per_epoch})`, min: 1, max: 1024 }),
    'genesis-time': Flags.integer({ description: 'Unix seconds of slot 0', required: true }),
    out: Flags.string({ description: 'output directory (the shared genesis volume)', required: true }),
    'password-file': Flags.string({ description: `keystore password file (default: the devnet password "${DEVNET_PASSWORD}")` }),
    'kdf-memory': Flags.integer({ description: 'Argon2id memory in KiB of the keystores', default: DEVNET_KDF_MEMORY_KIB, min: 64, max: 4 * 1024 * 1024, helpGroup: 'ADVANCED' }),
  };

  async run(): Promise<GenesisStepResult> {
    const { flags } = await this.parse(DevnetGenesis);
    const password = flags['password-file'] ? await readPassword(flags['password-file']) : DEVNET_PASSWORD;
    const r = await runGenesisStep({
      validators: flags.validators,
      producers: flags.nodes,
      followers: flags.followers,
      accounts: flags.accounts,
      ...(flags['slot-time'] !== undefined ? { slotSeconds: flags['slot-time'] } : {}),
      ...(flags['slots-per-epoch'] !== undefined ? { slotsPerEpoch: flags['slots-per-epoch'] } : {}),
      genesisTime: flags['genesis-time'],
      out: resolve(flags.out),
      password,
      kdfMemoryKib: flags['kdf-memory'],
    });
    this.say(`${r.created ? 'Wrote' : 'Kept'} ${r.genesis} (hash ${r.genesis_hash})`);
    for (const n of r.nodes) this.say(`  node ${n.index} ${n.role} ${n.ordinal}: beacon ${n.beacon.peer_id}, execution ${n.execution.peer_id}`);
    return r;
  }
}
