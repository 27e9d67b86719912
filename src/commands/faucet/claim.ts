import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { executionUrlFlag } from '../../cli/flags.js';
import { formatAmount } from '../../cli/format.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';
import { waitForInclusion } from '../../client/send.js';
import { resolveAddress } from '../../wallet/store.js';

export default class FaucetClaim extends SvcCommand {
  static override summary = 'Ask the testnet faucet for tokens (10 per address, once per cooldown, 24 h by default)';
  static override description =
    'The faucet sends a real signed transfer through the pool; it is spendable once a block includes it (--wait waits for that; else follow it with `svc tx status HASH`). A second claim within the cooldown fails with the time of the next allowed claim.';
  static override examples = ['<%= config.bin %> faucet claim 0x00000000000000000000000000000000000000aa', '<%= config.bin %> faucet claim alice --json'];
  static override args = { address: Args.string({ description: '0x address, or the name of a wallet in the store', required: true }) };
  static override flags = {
    wait: Flags.boolean({ description: 'wait until the faucet transfer is in a block (the tokens are spendable)' }),
    timeout: Flags.integer({ description: 'with --wait: seconds to wait before giving up (exit 1)', default: 60, min: 1, max: 86_400 }),
    'execution-url': executionUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(FaucetClaim);
    const address = await resolveAddress(args.address);
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const claim = await client.faucetClaim(address);
    this.say(`Claimed ${formatAmount(claim.amount)} for ${claim.address}`);
    this.say(`Tx hash: ${claim.tx_hash}`);
    if (!flags.wait) {
      this.say(`Follow it with: svc tx status ${claim.tx_hash}`);
      return claim;
    }
    if (!this.jsonEnabled()) this.note(`Waiting up to ${flags.timeout} s for a block…`);
    const status = await waitForInclusion(client, claim.tx_hash, { timeoutMs: flags.timeout * 1000 });
    this.say(`Included in block ${status.block?.number ?? '?'} (${status.state})`);
    return { ...claim, state: status.state, block: status.block };
  }
}
