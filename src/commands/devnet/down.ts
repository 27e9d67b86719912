import { Flags } from '@oclif/core';
import { devnetDirFlag } from '../../cli/flags.js';
import { SvcCommand } from '../../cli/base.js';
import { type DownResult, downDevnet } from '../../devnet/lifecycle.js';
import { currentDevnetDir } from '../../devnet/manifest.js';

export default class DevnetDown extends SvcCommand {
  static override summary = 'Stop a detached devnet (every process, in order); --clean also deletes its chain and keys';
  static override examples = ['<%= config.bin %> devnet down', '<%= config.bin %> devnet down --clean --json'];
  static override flags = {
    dir: devnetDirFlag,
    clean: Flags.boolean({ description: 'also remove the devnet\'s files (genesis, keys, data, logs, manifest)' }),
  };

  async run(): Promise<DownResult> {
    const { flags } = await this.parse(DevnetDown);
    const r = await downDevnet(flags.dir ?? currentDevnetDir(), { clean: flags.clean === true });
    this.say(r.stopped.length ? `Stopped ${r.stopped.length} process(es): ${r.stopped.join(', ')}` : 'Nothing was running.');
    if (r.cleaned) this.say(`Removed the devnet in ${r.dir}`);
    else this.say(`Resume with: svc devnet up --dir ${r.dir}`);
    return r;
  }
}
