import { Flags } from '@oclif/core';
import { SvcCommand, UsageError } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { formatAmount } from '../../cli/format.js';
import { readPassword } from '../../cli/secrets.js';
import { bridgeGasPriceFlag, chainFromFlag, parseDuration, parseTokens, parseWei } from '../../cli/bridge-flags.js';
import { HASH_BYTES, MAX_BRIDGE_TIMEOUT_SECONDS } from '../../core/constants.js';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { parseAddress } from '../../core/codec/json.js';
import { SvcError } from '../../core/errors.js';
import { BridgeOp, bidId } from '../../core/bridge/types.js';
import { BridgeExecutionClient, isUnknownBid } from '../../client/bridge.js';
import { connectChain, submitBridgeOp, unlockSigner } from '../../client/bridge-ops.js';
import { waitForInclusion } from '../../client/send.js';

/** Pause between polls of the beacon for the BID. */
const POLL_MS = 500;

export default class BridgeSend extends SvcCommand {
  static override summary = 'Lock tokens on this chain for a recipient on a counterpart chain; prints the BID';
  static override description =
    'Sends a lock operation (a transaction to the bridge address 0x…1003 carrying the amount) from --from. The BID id is computed locally from the signed transaction, so it is known before the block. ' +
    'The destination is a registered counterpart, by chain id (--chain) or genesis hash (--destination). The recipient can be paid on the destination until --timeout has passed; after it, the lock can be refunded (svc bridge refund). ' +
    'With --wait, exits 0 once the lock is in a block and the beacon shows the BID, and 1 if the lock failed or --wait-timeout passes first.';
  static override examples = [
    '<%= config.bin %> bridge send --to 0x00000000000000000000000000000000000000aa --amount 5 --chain svc-b --timeout 10m --from alice --wait',
    '<%= config.bin %> bridge send --to 0x00000000000000000000000000000000000000aa --amount 0.5 --destination 0xGENESIS_HASH --timeout 90s --from alice --on ./a --json',
  ];
  static override flags = {
    to: Flags.string({ description: 'recipient 0x address on the destination chain', required: true }),
    amount: Flags.string({ description: 'tokens to lock (up to 18 decimals)', required: true, helpValue: 'TOKENS' }),
    chain: Flags.string({ description: 'destination: chain id of a registered counterpart', exactlyOne: ['chain', 'destination'], helpValue: 'CHAIN_ID' }),
    destination: Flags.string({ description: 'destination: genesis hash of a registered counterpart', helpValue: 'GENESIS_HASH' }),
    timeout: Flags.string({ description: `how long the destination may release it (90s, 10m, 2h, 1d; at most ${MAX_BRIDGE_TIMEOUT_SECONDS / 86_400} days)`, default: '10m', helpValue: 'DURATION' }),
    from: Flags.string({ description: 'sending wallet: name, address or file path', required: true }),
    on: Flags.string({ description: 'the source chain: a devnet directory or BEACON_URL,EXECUTION_URL (default: the running devnet)', helpValue: 'DIR_OR_URLS' }),
    'gas-price': bridgeGasPriceFlag,
    'password-file': passwordFileFlag,
    wait: Flags.boolean({ description: 'wait until the lock is in a block and the beacon shows the BID' }),
    'wait-timeout': Flags.integer({ description: 'with --wait: seconds before giving up (exit 1)', default: 120, min: 1, max: 86_400 }),
  };

  async run() {
    const { flags } = await this.parse(BridgeSend);
    const amount = parseTokens(flags.amount);
    if (amount === 0n) throw new UsageError('--amount must be above 0');
    const duration = parseDuration(flags.timeout, '--timeout');
    if (duration > MAX_BRIDGE_TIMEOUT_SECONDS) throw new UsageError(`--timeout must be at most ${MAX_BRIDGE_TIMEOUT_SECONDS} s (7 days), got ${duration} s`);
    const recipient = parseAddress(flags.to, 'to');
    const destFlag = flags.destination === undefined ? undefined : toHex(parseHex(flags.destination, 'destination', HASH_BYTES));
    const gasPrice = parseWei(flags['gas-price'], '--gas-price');

    const spec = await chainFromFlag(flags.on, '--on', 'running');
    const chain = await connectChain(spec, gasPrice === undefined ? {} : { gasPrice });
    // The execution's view decides admission: resolve the destination from it.
    const known = await new BridgeExecutionClient(spec.executionUrl).counterparts();
    const dest = known.counterparts.find((c) => (destFlag !== undefined ? c.genesis_hash.toLowerCase() === destFlag : c.chain_id === flags.chain));
    if (!dest) {
      const names = known.counterparts.map((c) => `${c.chain_id} (${c.genesis_hash})`).join(', ') || 'none';
      throw new SvcError('BRIDGE_UNKNOWN_COUNTERPART', `${destFlag ?? flags.chain} is not a registered counterpart of ${chain.chainId} (registered: ${names}); register it with svc bridge register`);
    }
    const signer = await unlockSigner(flags.from, () => readPassword(flags['password-file']));
    const timeout = Math.floor(Date.now() / 1000) + duration;
    const destination = parseHex(dest.genesis_hash, 'destination', HASH_BYTES);
    const sent = await submitBridgeOp(chain, signer, { op: BridgeOp.Lock, body: { destination, recipient, timeout } }, amount);
    const bid = toHex(
      bidId({ source: parseHex(chain.genesisHash, 'source', HASH_BYTES), destination, lockTx: parseHex(sent.hash, 'tx', HASH_BYTES), sender: parseHex(signer.address, 'sender'), recipient, amount, timeout }),
    );
    const out = {
      bid,
      tx_hash: sent.hash,
      from: signer.address,
      recipient: toHex(recipient),
      amount: amount.toString(),
      source: { chain_id: chain.chainId, genesis_hash: chain.genesisHash },
      destination: { chain_id: dest.chain_id, genesis_hash: dest.genesis_hash.toLowerCase() },
      timeout,
      nonce: sent.nonce,
      gas_limit: sent.gas_limit,
      gas_price: sent.gas_price,
      pool_status: sent.pool_status,
    };
    this.say(`BID:       ${bid}`);
    this.say(`Lock tx:   ${sent.hash}`);
    this.say(`Amount:    ${formatAmount(amount)}`);
    this.say(`Route:     ${chain.chainId} → ${dest.chain_id}, recipient ${out.recipient}`);
    this.say(`Timeout:   ${new Date(timeout * 1000).toISOString()} (refundable after it unless released)`);
    if (!flags.wait) return out;

    if (!this.jsonEnabled()) this.note(`Waiting up to ${flags['wait-timeout']} s for the lock's block and the BID…`);
    const deadline = Date.now() + flags['wait-timeout'] * 1000;
    const status = await waitForInclusion(chain.execution, sent.hash, { timeoutMs: flags['wait-timeout'] * 1000 });
    if (status.receipt?.status !== 1) throw new SvcError('TX_FAILED', `the lock ${sent.hash} failed in block ${status.receipt?.blockNumber}: ${status.receipt?.error ?? 'no receipt'}`);
    for (;;) {
      try {
        const view = await chain.beacon.bid(bid);
        this.say(`Status:    ${view.status} (block ${view.block?.index ?? '?'})`);
        return { ...out, status: view.status, block: view.block };
      } catch (err) {
        if (!isUnknownBid(err)) throw err;
      }
      if (Date.now() > deadline) throw new SvcError('TIMEOUT', `the lock is in block ${status.receipt.blockNumber}, but the beacon did not show BID ${bid} within ${flags['wait-timeout']} s; check with svc bridge status ${bid}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}
