import { devnetDirFlag } from '../../cli/flags.js';
import { SvcCommand } from '../../cli/base.js';
import { formatAmount } from '../../cli/format.js';
import { currentDevnetDir } from '../../devnet/manifest.js';
import { type DevnetStatus, type NodeStatusView, devnetStatus } from '../../devnet/status.js';
import { nodeStatusText } from '../../devnet/dashboard-format.js';

export default class DevnetStatusCommand extends SvcCommand {
  static override summary = 'Health of each devnet process, each node\'s head, peers and finalised epoch, mempool and validators';
  static override description = 'Exits 0 when the devnet is running and healthy, 1 otherwise (the report still prints).';
  static override examples = ['<%= config.bin %> devnet status', '<%= config.bin %> devnet status --json'];
  static override flags = {
    dir: devnetDirFlag,
  };

  async run(): Promise<DevnetStatus> {
    const { flags } = await this.parse(DevnetStatusCommand);
    const s = await devnetStatus(flags.dir ?? currentDevnetDir());
    this.say(`Devnet ${s.dir}: ${s.state}${s.healthy ? ', healthy' : ''} (${s.mode}, validator processes ${s.validator_processes}, chain ${s.chain_id})`);
    if (s.supervisor) this.say(`  supervisor     pid ${s.supervisor.pid} ${s.supervisor.alive ? 'running' : 'NOT RUNNING'}`);
    for (const p of s.processes) this.say(`  ${p.name.padEnd(14)} pid ${String(p.pid ?? '-').padEnd(8)} ${p.alive ? 'running' : 'not running'}  ${p.status}${p.restarts ? `, ${p.restarts} restart(s)` : ''}  ${p.log}${p.validators && p.validators.length > 1 ? `  (validators ${p.validators.join(', ')})` : ''}`);
    if (s.head) this.say(`Head           slot ${s.head.slot}, block ${s.head.index} ${s.head.root}`);
    if (s.finalized_epoch !== null) this.say(`Finality       justified epoch ${s.justified_epoch}, finalised epoch ${s.finalized_epoch} (execution block ${s.finalized_block ?? '?'})`);
    if (s.mempool) this.say(`Mempool        ${s.mempool.size} (${s.mempool.pending} pending, ${s.mempool.queued} queued)`);
    if (s.nodes.length > 1) for (const n of s.nodes) this.say(nodeLine(n));
    this.say(`Endpoints      execution ${s.endpoints.execution}, JSON-RPC ${s.endpoints.rpc}, beacon ${s.endpoints.beacon}`);
    for (const v of s.validators) this.say(`  validator ${v.index} ${v.address}  ${v.balance === null ? 'balance unknown' : formatAmount(v.balance)}${v.process ? `  (${v.process})` : ''}`);
    for (const p of s.problems) this.say(`Problem: ${p}`);
    if (!s.healthy) process.exitCode = 1;
    return s;
  }
}

/** One node's line: role, head, finality and peers. */
function nodeLine(n: NodeStatusView): string {
  return `  ${`node ${n.index}`.padEnd(14)} ${nodeStatusText(n)}`;
}
