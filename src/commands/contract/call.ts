import { Args } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { contractReceiptLines, contractTxFlags, sentLines, usageAddress } from '../../cli/contract-flags.js';
import { readPassword } from '../../cli/secrets.js';
import { callContract, parseArgs, receiptFailure, waitForReceipt } from '../../client/contract.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';

export default class ContractCall extends SvcCommand {
  static override summary = 'Call a contract method in a transaction; --wait follows it into a block';
  static override description =
    'Arguments are typed as for `contract deploy`. The gas limit defaults to the node\'s estimate, which refuses a call that would fail (give --gas-limit to send it anyway). ' +
    'With --wait, exits 1 if the receipt has status 0, printing the reason and the gas charged.';
  static override examples = [
    '<%= config.bin %> contract call 0x5f…e1 transfer 0x00000000000000000000000000000000000000aa 100 --from alice --wait',
    '<%= config.bin %> contract call 0x5f…e1 increment --from alice --json',
  ];
  static override strict = false;
  static override args = {
    address: Args.string({ description: 'contract address', required: true }),
    method: Args.string({ description: 'method (an exported function)', required: true }),
  };
  static override flags = contractTxFlags;

  async run() {
    const { args, argv, flags } = await this.parse(ContractCall);
    const address = usageAddress(args.address);
    const values = parseArgs((argv as string[]).slice(2));
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const settings = { client, from: flags.from, value: flags.value, gasPrice: flags['gas-price'], gasLimit: flags['gas-limit'], nonce: flags.nonce, chainId: flags['chain-id'], password: () => readPassword(flags['password-file']), warn: (l: string) => this.note(l) };
    const sent = await callContract(settings, address, args.method, values);
    for (const line of sentLines(sent)) this.say(line);
    if (!flags.wait) return sent;
    if (!this.jsonEnabled()) this.note(`Waiting up to ${flags.timeout} s for a block…`);
    const done = await waitForReceipt(client, sent, flags.timeout * 1000);
    for (const line of contractReceiptLines(done.receipt, done.state)) this.say(line);
    const failed = receiptFailure(done.receipt);
    if (failed) throw failed;
    return done;
  }
}
