import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { formatAmount } from '../../cli/format.js';
import { readPassword } from '../../cli/secrets.js';
import { bridgeGasPriceFlag, chainFromFlag, parseWei } from '../../cli/bridge-flags.js';
import { bytesEqual } from '../../core/codec/bytes.js';
import { BridgeError, BridgeOp, stateWord } from '../../core/bridge/types.js';
import { SvcError } from '../../core/errors.js';
import { parseBidId } from '../../client/bridge.js';
import { bidFieldsFromJson } from '../../core/bridge/types.js';
import { buildSettle, connectChain, submitBridgeOp, unlockSigner } from '../../client/bridge-ops.js';
import { waitForInclusion } from '../../client/send.js';

export default class BridgeRefund extends SvcCommand {
  static override summary = 'Refund a BID on its source chain once the destination has finalised past its timeout without releasing it';
  static override description =
    "Proves, from the destination's latest finalised header (at or after the BID's timeout), that the destination never released the BID, and sends the refund to the source chain: the amount goes back to the BID's sender, whoever sends the refund. " +
    'Refused before anything is sent when the destination has not finalised past the timeout yet (BRIDGE_TIMEOUT_NOT_REACHED) or released the BID (BRIDGE_RELEASED_BEFORE_TIMEOUT: it completes instead). ' +
    'With --wait, exits 0 once the refund is in a block, 1 if it failed there or --wait-timeout passes first.';
  static override examples = ['<%= config.bin %> bridge refund 0xBID --from alice --source ./a --dest ./b --wait'];
  static override args = { bid: Args.string({ description: 'BID id (0x and 64 hex digits)', required: true }) };
  static override flags = {
    from: Flags.string({ description: 'wallet on the source chain that pays the refund transaction', required: true }),
    source: Flags.string({ description: 'the chain the lock is on: a devnet directory or BEACON_URL,EXECUTION_URL (default: the running devnet)', helpValue: 'DIR_OR_URLS' }),
    dest: Flags.string({ description: "the BID's destination chain (default: the running devnet's counterpart)", helpValue: 'DIR_OR_URLS' }),
    'gas-price': bridgeGasPriceFlag,
    'password-file': passwordFileFlag,
    wait: Flags.boolean({ description: 'wait until the refund is in a block' }),
    'wait-timeout': Flags.integer({ description: 'with --wait: seconds before giving up (exit 1)', default: 60, min: 1, max: 86_400 }),
  };

  async run() {
    const { args, flags } = await this.parse(BridgeRefund);
    const id = parseBidId(args.bid);
    const gasPrice = parseWei(flags['gas-price'], '--gas-price');
    const source = await connectChain(await chainFromFlag(flags.source, '--source', 'running'), gasPrice === undefined ? {} : { gasPrice });
    const dest = await connectChain(await chainFromFlag(flags.dest, '--dest', 'counterpart'));
    const view = await source.beacon.bid(id);
    if (view.direction !== 'outgoing') throw new SvcError('BRIDGE_WRONG_SOURCE', `BID ${id} is incoming on ${source.chainId}: refund it on its source chain ${view.source.chain_id}`);
    if (view.fields.destination.toLowerCase() !== dest.genesisHash) throw new SvcError('USAGE', `BID ${id} is bound for ${view.destination.chain_id} (${view.fields.destination}), not ${dest.chainId}: pass its destination as --dest`);
    const fields = bidFieldsFromJson(view.fields);
    const { body, proven } = await buildSettle(dest.beacon, fields, Buffer.from(id.slice(2), 'hex'));
    if (proven.header.timestampMs < fields.timeout * 1000) {
      throw new BridgeError('BRIDGE_TIMEOUT_NOT_REACHED', `${dest.chainId}'s latest finalised block ${proven.header.index} is at ${new Date(proven.header.timestampMs).toISOString()}, before the BID's timeout ${new Date(fields.timeout * 1000).toISOString()}: try again once it has finalised past it`);
    }
    if (!bytesEqual(proven.value, stateWord(0))) throw new BridgeError('BRIDGE_RELEASED_BEFORE_TIMEOUT', `${dest.chainId} released BID ${id}: it completes on ${source.chainId} (svc bridge relay), it cannot be refunded`);
    const signer = await unlockSigner(flags.from, () => readPassword(flags['password-file']));
    const sent = await submitBridgeOp(source, signer, { op: BridgeOp.Refund, body });
    const out = { bid: id, tx_hash: sent.hash, amount: view.fields.amount, to: view.fields.sender, proven_at: { chain_id: dest.chainId, index: proven.header.index, root: proven.root, timestamp_ms: proven.header.timestampMs }, pool_status: sent.pool_status };
    this.say(`Refund tx:  ${sent.hash}`);
    this.say(`Refunds:    ${formatAmount(view.fields.amount)} to ${view.fields.sender}`);
    this.say(`Proven at:  ${dest.chainId} block ${proven.header.index} (${proven.root})`);
    if (!flags.wait) return out;
    const status = await waitForInclusion(source.execution, sent.hash, { timeoutMs: flags['wait-timeout'] * 1000 });
    if (status.receipt?.status !== 1) throw new SvcError('TX_FAILED', `the refund ${sent.hash} failed in block ${status.receipt?.blockNumber}: ${status.receipt?.error ?? 'no receipt'}`);
    this.say(`Block:      ${status.receipt.blockNumber}`);
    return { ...out, block: status.block };
  }
}
