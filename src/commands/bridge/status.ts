import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { formatAmount, formatTable } from '../../cli/format.js';
import { chainFromFlag } from '../../cli/bridge-flags.js';
import { BridgeBeaconClient, parseBidId } from '../../client/bridge.js';

export default class BridgeStatus extends SvcCommand {
  static override summary = "Show a BID as a chain's beacon sees it (status, terms, history), or without a BID the chain's counterparts and their ledgers";
  static override description =
    'Asks the beacon of --on (default: the running devnet): the source chain knows a BID from its lock (direction outgoing: PENDING, ATTESTED, FINALIZED, EXPIRED, COMPLETED, REFUNDED), the destination from its release (incoming: COMPLETED). ' +
    'Exits 1 (code UNKNOWN_BID) when that beacon has not seen the BID. Without a BID: the bridge reserve and, per counterpart (SOURCE genesis: listed in the genesis; registration: registered with the validators\' signatures), its ledger (allowance, available to its releases, escrow of open locks toward it).';
  static override examples = ['<%= config.bin %> bridge status 0xBID', '<%= config.bin %> bridge status 0xBID --on ./b --json', '<%= config.bin %> bridge status --on ./a'];
  static override args = { bid: Args.string({ description: 'BID id (0x and 64 hex digits); absent: the counterparts and their ledgers' }) };
  static override flags = {
    on: Flags.string({ description: 'the chain to ask: a devnet directory or BEACON_URL,EXECUTION_URL (default: the running devnet)', helpValue: 'DIR_OR_URLS' }),
  };

  async run() {
    const { args, flags } = await this.parse(BridgeStatus);
    // A malformed id is refused before any chain is looked for.
    const bid = args.bid === undefined ? undefined : parseBidId(args.bid);
    const spec = await chainFromFlag(flags.on, '--on', 'running');
    const beacon = new BridgeBeaconClient(spec.beaconUrl);
    if (bid === undefined) {
      const cp = await beacon.counterparts();
      this.say(`Chain:        ${cp.self.chain_id} (${cp.self.genesis_hash})`);
      if (cp.reserve) this.say(`Reserve:      ${formatAmount(cp.reserve.balance)} held, ${formatAmount(cp.reserve.unallocated)} unallocated`);
      this.say('');
      const rows = cp.counterparts.map((c) => [c.chain_id, c.genesis_hash, c.source ?? 'registration', formatAmount(c.ledger?.allowance ?? '0'), formatAmount(c.ledger?.available ?? '0'), formatAmount(c.ledger?.escrow ?? '0')]);
      for (const line of formatTable(['COUNTERPART', 'GENESIS', 'SOURCE', 'ALLOWANCE', 'AVAILABLE', 'ESCROW'], rows)) this.say(line);
      return cp;
    }
    const view = await beacon.bid(bid);
    this.say(`BID:          ${view.bid}`);
    this.say(`Status:       ${view.status} (${view.direction})`);
    this.say(`Route:        ${view.source.chain_id} → ${view.destination.chain_id}`);
    this.say(`Amount:       ${formatAmount(view.fields.amount)}`);
    this.say(`Sender:       ${view.fields.sender}`);
    this.say(`Recipient:    ${view.fields.recipient}`);
    this.say(`Timeout:      ${new Date(view.fields.timeout * 1000).toISOString()}`);
    this.say(`Lock tx:      ${view.fields.lock_tx}`);
    if (view.block) this.say(`Block:        ${view.block.index} (${view.block.hash})`);
    if (view.signatures) this.say(`Signatures:   ${view.signatures.signers} signers, ${view.signatures.signed_stake} of ${view.signatures.active_stake} wei of stake`);
    this.say('');
    const rows = view.history.map((h) => [h.status, h.at, String(h.slot), h.tx_hash ?? '']);
    for (const line of formatTable(['STATUS', 'AT', 'SLOT', 'TX'], rows)) this.say(line);
    return view;
  }
}
