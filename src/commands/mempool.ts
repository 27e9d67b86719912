import { SvcCommand } from '../cli/base.js';
import { executionUrlFlag } from '../cli/flags.js';
import { formatTable } from '../cli/format.js';
import { ExecutionClient, resolveExecutionUrl } from '../client/execution.js';

export default class Mempool extends SvcCommand {
  static override summary = "List the execution node's transaction pool: hash, sender, recipient, value, nonce, gas price, status";
  static override description = 'Values and gas prices are wei. Status is ready (executable next) or queued (waits for a lower nonce). --json gives the node\'s full entries (with signatures and public keys).';
  static override examples = ['<%= config.bin %> mempool', '<%= config.bin %> mempool --json'];
  static override flags = { 'execution-url': executionUrlFlag };

  async run() {
    const { flags } = await this.parse(Mempool);
    const pool = await new ExecutionClient(resolveExecutionUrl(flags['execution-url'])).mempool();
    this.say(`${pool.count} ${pool.count === 1 ? 'transaction' : 'transactions'} in the pool`);
    if (pool.transactions.length > 0) {
      this.say();
      const rows = pool.transactions.map((t) => [t.hash, t.from, t.to ?? '(deploy)', t.value, String(t.nonce), t.gas_price, t.status]);
      for (const line of formatTable(['HASH', 'FROM', 'TO', 'VALUE (wei)', 'NONCE', 'GAS PRICE (wei)', 'STATUS'], rows)) this.say(line);
    }
    return pool;
  }
}
