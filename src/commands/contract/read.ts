import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { executionUrlFlag } from '../../cli/flags.js';
import { parseArgs, readContract } from '../../client/contract.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';
import { usageAddress } from '../../cli/contract-flags.js';

export default class ContractRead extends SvcCommand {
  static override summary = 'Run a contract method without a transaction (eth_call) and decode what it returns';
  static override description = 'Nothing is signed or paid. Arguments are typed as for `contract deploy`. A revert exits 1 with its reason.';
  static override examples = ['<%= config.bin %> contract read 0x5f…e1 balanceOf 0x00000000000000000000000000000000000000aa', '<%= config.bin %> contract read 0x5f…e1 get --block finalized --json'];
  static override strict = false;
  static override args = {
    address: Args.string({ description: 'contract address', required: true }),
    method: Args.string({ description: 'method (an exported function)', required: true }),
  };
  static override flags = {
    from: Flags.string({ description: 'caller address the contract sees (default: the zero address)' }),
    block: Flags.string({ description: 'block to read at: number, 0x hash, latest, finalized or earliest (default latest)' }),
    'execution-url': executionUrlFlag,
  };

  async run() {
    const { args, argv, flags } = await this.parse(ContractRead);
    const address = usageAddress(args.address);
    const values = parseArgs((argv as string[]).slice(2));
    const from = flags.from === undefined ? undefined : usageAddress(flags.from);
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const r = await readContract(client, address, args.method, values, { ...(from ? { from } : {}), ...(flags.block ? { block: flags.block } : {}) });
    if (r.values) {
      if (r.values.length === 0) this.say('(no return value)');
      for (const v of r.values) this.say(`${v.type.padEnd(8)} ${String(v.value)}`);
    } else {
      this.say(`Return data: ${r.return_data} (not tagged values: ${r.decode_error})`);
    }
    return r;
  }
}
