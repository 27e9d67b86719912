import { SvcCommand } from '../../cli/base.js';
import { listWallets, walletsDir } from '../../wallet/store.js';
import { summarizeWallet } from '../../wallet/summary.js';

export default class WalletList extends SvcCommand {
  static override summary = 'List the wallets in $SVC_HOME/wallets';
  static override examples = ['<%= config.bin %> wallet list', '<%= config.bin %> wallet list --json'];

  async run() {
    await this.parse(WalletList);
    const { wallets, errors } = await listWallets();
    const rows = wallets.map(summarizeWallet);
    if (rows.length === 0) this.say(`No wallets in ${walletsDir()} (create one with: svc wallet new)`);
    for (const r of rows) this.say(`${r.name.padEnd(44)} ${r.address}${r.watch_only ? '  (watch-only)' : ''}`);
    for (const e of errors) this.note(`warning: skipped ${e.path}: ${e.error}`);
    return { directory: walletsDir(), wallets: rows, errors };
  }
}
