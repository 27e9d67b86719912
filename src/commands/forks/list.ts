import { SvcCommand } from '../../cli/base.js';
import { epochOfSlot, forkSchedule, slotAt } from '../../core/genesis/genesis.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../cli/flags.js';

export default class ForksList extends SvcCommand {
  static override summary = "List the genesis fork manifest and each fork's status at the current epoch";
  static override examples = ['<%= config.bin %> forks list --genesis ./net/genesis.json', '<%= config.bin %> forks list --json'];
  static override flags = {
    genesis: genesisFlag,
  };

  async run() {
    const { flags } = await this.parse(ForksList);
    const path = flags.genesis ?? defaultGenesisPath();
    const genesis = await loadGenesisFile(path);
    const epoch = epochOfSlot(genesis, slotAt(genesis, Date.now()));
    const forks = forkSchedule(genesis, epoch);
    this.say(`Chain ${genesis.chain_id}, current epoch ${epoch}`);
    this.say(`${'NAME'.padEnd(16)} ${'EPOCH'.padStart(8)}  ${'VERSION'.padEnd(10)}  STATUS`);
    for (const f of forks) this.say(`${f.name.padEnd(16)} ${String(f.epoch).padStart(8)}  ${f.version.padEnd(10)}  ${f.status}`);
    return { genesis: path, chain_id: genesis.chain_id, current_epoch: epoch, forks };
  }
}
