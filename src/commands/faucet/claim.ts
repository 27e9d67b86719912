import { Args } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { executionUrlFlag } from '../../cli/flags.js';
import { formatAmount } from '../../cli/format.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';
import { resolveAddress } from '../../wallet/store.js';

export default class FaucetClaim extends SvcCommand {
  static override summary = 'Ask the testnet faucet for tokens (10 per address, once per cooldown, 24 h by default)';
  static override description =
    'The faucet sends a real signed transfer through the pool; it is spendable once a block includes it (follow it with `svc tx status HASH`). A second claim within the cooldown fails with the time of the next allowed claim.';
  static override examples = ['<%= config.bin %> faucet claim 0x00000000000000000000000000000000000000aa', '<%= config.bin %> faucet claim alice --json'];
  static override args = { address: Args.string({ description: '0x address, or the name of a wallet in the store', required: true }) };
  static override flags = { 'execution-url': executionUrlFlag };

  async run() {
    const { args, flags } = await this.parse(FaucetClaim);
    const address = await resolveAddress(args.address);
    const claim = await new ExecutionClient(resolveExecutionUrl(flags['execution-url'])).faucetClaim(address);
    this.say(`Claimed ${formatAmount(claim.amount)} for ${claim.address}`);
    this.say(`Tx hash: ${claim.tx_hash}`);
    this.say(`Follow it with: svc tx status ${claim.tx_hash}`);
    return claim;
  }
}
