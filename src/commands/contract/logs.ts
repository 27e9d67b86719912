import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { executionUrlFlag } from '../../cli/flags.js';
import { contractLogs, parseBound } from '../../client/contract.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';
import { usageAddress } from '../../cli/contract-flags.js';

export default class ContractLogs extends SvcCommand {
  static override summary = 'List the events a contract emitted, decoded';
  static override description =
    'Searches canonical blocks from --from to --to (default: the last 10,000 blocks up to the head, the most one query may span). --event keeps one event (its topic0 is SHA3-256 of the name). ' +
    'Address topics are shown as addresses and data as tagged values where they follow the SDK\'s conventions.';
  static override examples = ['<%= config.bin %> contract logs 0x5f…e1 --from 0 --event Transfer', '<%= config.bin %> contract logs 0x5f…e1 --from 100 --to 200 --json'];
  static override args = { address: Args.string({ description: 'contract address', required: true }) };
  static override flags = {
    from: Flags.string({ description: 'first block: number, latest, finalized or earliest (default: 9,999 blocks before --to)' }),
    to: Flags.string({ description: 'last block: number, latest, finalized or earliest (default latest)' }),
    event: Flags.string({ description: 'only this event, by name (e.g. Transfer)' }),
    'execution-url': executionUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(ContractLogs);
    const address = usageAddress(args.address);
    const from = parseBound(flags.from, '--from');
    const to = parseBound(flags.to, '--to');
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const r = await contractLogs(client, address, { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }), ...(flags.event ? { event: flags.event } : {}) });
    this.say(`Blocks ${r.from_block}..${r.to_block}: ${r.logs.length} log${r.logs.length === 1 ? '' : 's'}`);
    for (const l of r.logs) {
      this.say(`block ${l.blockNumber} tx ${l.transactionHash} log ${l.logIndex}${l.event ? ` ${l.event}` : ''}`);
      l.topics.forEach((t, i) => this.say(`  topic${i}  ${i > 0 && l.topic_addresses[i - 1] ? `${l.topic_addresses[i - 1]} (address)` : t}`));
      if (l.values) for (const v of l.values) this.say(`  ${v.type.padEnd(8)} ${String(v.value)}`);
      else this.say(`  data    ${l.data}`);
    }
    return r;
  }
}
