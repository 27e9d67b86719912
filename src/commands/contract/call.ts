import { Args } from '@oclif/core';
import { ContractTxCommand, contractTxFlags, usageAddress } from '../../cli/contract-flags.js';
import { callContract, parseArgs } from '../../client/contract.js';

export default class ContractCall extends ContractTxCommand {
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
    return this.sendAndFollow(flags, (settings) => callContract(settings, address, args.method, values));
  }
}
