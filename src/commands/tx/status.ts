import { Args } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { executionUrlFlag } from '../../cli/flags.js';
import { formatAmount, receiptLines } from '../../cli/format.js';
import { ExecutionClient, parseTxHash, resolveExecutionUrl} from '../../client/execution.js';

const UNKNOWN_NOTE = 'not in the pool nor in a canonical block: never seen, rejected, evicted, or only in a non-canonical block';

export default class TxStatus extends SvcCommand {
  static override summary = 'Show where a transaction is: Pending (ready/queued), Confirmed, Finalized or unknown, with its block and receipt';
  static override description = 'An unknown hash is an answer, not an error: the state is "unknown" and the exit code 0.';
  static override examples = ['<%= config.bin %> tx status 0x3f1c…', '<%= config.bin %> tx status 0x3f1c… --json'];
  static override args = { hash: Args.string({ description: 'transaction hash (0x and 64 hex digits)', required: true }) };
  static override flags = {
    'execution-url': executionUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(TxStatus);
    const hash = parseTxHash(args.hash);
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const s = await client.txStatus(hash);
    this.say(`Hash:      ${s.hash}`);
    if (s.state === 'Pending') {
      this.say(`State:     Pending (${s.pool_status ?? 'in the pool'}${s.pool_status === 'queued' ? ': waits for a lower nonce' : ''})`);
    } else if (s.state === 'unknown') {
      this.say(`State:     unknown (${UNKNOWN_NOTE})`);
    } else {
      for (const line of receiptLines(s)) this.say(line);
    }
    const tx = s.tx;
    if (tx) {
      this.say(`From:      ${tx.from}`);
      if ('to' in tx) this.say(`To:        ${tx.to ?? '(contract deployment)'}`);
      if ('value' in tx) this.say(`Value:     ${formatAmount(tx.value)}`);
      this.say(`Nonce:     ${tx.nonce}`);
    }
    return s;
  }
}
