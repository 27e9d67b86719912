import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { executionUrlFlag } from '../../cli/flags.js';
import { formatAmount, receiptLines } from '../../cli/format.js';
import { readPassword } from '../../cli/secrets.js';
import { valueTxFlags, valueTxInput } from '../../cli/tx-flags.js';
import { SvcError } from '../../core/errors.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';
import { sendValueTx, waitForInclusion } from '../../client/send.js';

export default class TxSend extends SvcCommand {
  static override summary = 'Sign a transaction and submit it to an execution node; --wait follows it into a block';
  static override description =
    'Values are base-10 wei strings. The chain id defaults to the node\'s and the nonce to the sender\'s pending nonce (after its pooled transactions). ' +
    'Admission errors are the node\'s messages (e.g. "insufficient balance for value + gas"). ' +
    'With --wait, exits 0 once the transaction is Confirmed or Finalized with receipt status success, and 1 if its receipt says failed or --timeout passes first.';
  static override examples = [
    '<%= config.bin %> tx send --from alice --to 0x00000000000000000000000000000000000000aa --value 1000000000000000000 --wait',
    '<%= config.bin %> tx send --from alice --to 0x00000000000000000000000000000000000000aa --value 1000 --nonce 4 --gas-price 2000000000 --json',
  ];
  static override flags = {
    ...valueTxFlags({ valueRequired: true }),
    nonce: Flags.string({ description: 'sender nonce (default: the pending nonce from the node)' }),
    'chain-id': Flags.string({ description: 'chain id the signature is bound to (default: the node\'s)' }),
    wait: Flags.boolean({ description: 'wait until the transaction is in a block and print its receipt' }),
    timeout: Flags.integer({ description: 'with --wait: seconds to wait before giving up (exit 1)', default: 60, min: 1, max: 86_400 }),
    'execution-url': executionUrlFlag,
  };

  async run() {
    const { flags } = await this.parse(TxSend);
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const sent = await sendValueTx({
      client,
      from: flags.from,
      input: { ...valueTxInput(flags, '0'), nonce: flags.nonce },
      chainId: flags['chain-id'],
      password: () => readPassword(flags['password-file']),
      warn: (line) => this.note(line),
    });
    this.say(`Hash:      ${sent.hash}`);
    this.say(`From:      ${sent.from}`);
    this.say(`To:        ${sent.to ?? '(contract deployment)'}`);
    this.say(`Value:     ${formatAmount(sent.value)}`);
    this.say(`Nonce:     ${sent.nonce}`);
    this.say(`Gas:       ${sent.gas_limit} at ${sent.gas_price} wei`);
    this.say(`Chain id:  ${sent.chain_id}`);
    this.say(`Pool:      ${sent.pool_status}${sent.pool_status === 'queued' ? ' (waits for a lower nonce)' : ''}${sent.replaced ? ` (replaced ${sent.replaced})` : ''}`);
    if (!flags.wait) return sent;

    if (!this.jsonEnabled()) this.note(`Waiting up to ${flags.timeout} s for a block…`);
    const status = await waitForInclusion(client, sent.hash, { timeoutMs: flags.timeout * 1000 });
    const receipt = status.receipt!;
    for (const line of receiptLines(status)) this.say(line);
    if (receipt.status !== 1) {
      throw new SvcError(
        'TX_FAILED',
        `transaction ${sent.hash} failed in block ${receipt.blockNumber}${receipt.error ? `: ${receipt.error}` : ''} (gas used ${receipt.gasUsed}, fee ${receipt.fee} wei)`,
      );
    }
    return { ...sent, state: status.state, block: status.block, receipt };
  }
}
