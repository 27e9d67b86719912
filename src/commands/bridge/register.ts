import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { readPassword } from '../../cli/secrets.js';
import { bridgeGasPriceFlag, chainFromFlag, parseWei } from '../../cli/bridge-flags.js';
import { toHex, utf8 } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { canonicalJson, genesisHash } from '../../core/genesis/genesis.js';
import { BridgeOp } from '../../core/bridge/types.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { connectChain, submitBridgeOp, unlockSigner } from '../../client/bridge-ops.js';
import { waitForInclusion } from '../../client/send.js';

export default class BridgeRegister extends SvcCommand {
  static override summary = 'Register a counterpart chain (by its genesis document) on a chain, so users can lock to it';
  static override description =
    "Sends a register operation carrying the counterpart's whole genesis document: the chain hashes it and records the hash. Registering trusts nothing: releases from that chain are still checked against its genesis validator set. " +
    'With --wait, exits 0 once the registration is in a block, 1 if it failed there (e.g. BRIDGE_COUNTERPART_INVALID) or --wait-timeout passes first.';
  static override examples = ['<%= config.bin %> bridge register --genesis ./b/genesis/genesis.json --from alice --on ./a --wait'];
  static override flags = {
    genesis: Flags.string({ description: "the counterpart's genesis.json", required: true, helpValue: 'FILE' }),
    from: Flags.string({ description: 'sending wallet: name, address or file path', required: true }),
    on: Flags.string({ description: 'the chain to register on: a devnet directory or BEACON_URL,EXECUTION_URL (default: the running devnet)', helpValue: 'DIR_OR_URLS' }),
    'gas-price': bridgeGasPriceFlag,
    'password-file': passwordFileFlag,
    wait: Flags.boolean({ description: 'wait until the registration is in a block' }),
    'wait-timeout': Flags.integer({ description: 'with --wait: seconds before giving up (exit 1)', default: 60, min: 1, max: 86_400 }),
  };

  async run() {
    const { flags } = await this.parse(BridgeRegister);
    const genesis = await loadGenesisFile(flags.genesis);
    const gasPrice = parseWei(flags['gas-price'], '--gas-price');
    const chain = await connectChain(await chainFromFlag(flags.on, '--on', 'running'), gasPrice === undefined ? {} : { gasPrice });
    const signer = await unlockSigner(flags.from, () => readPassword(flags['password-file']));
    const sent = await submitBridgeOp(chain, signer, { op: BridgeOp.Register, genesisJson: utf8(canonicalJson(genesis)) });
    const out = { tx_hash: sent.hash, on: chain.chainId, registered: { chain_id: genesis.chain_id, genesis_hash: toHex(genesisHash(genesis)) }, from: sent.from, gas_limit: sent.gas_limit, pool_status: sent.pool_status };
    this.say(`Register tx: ${sent.hash}`);
    this.say(`Registers:   ${genesis.chain_id} (${out.registered.genesis_hash}) on ${chain.chainId}`);
    if (!flags.wait) return out;
    const status = await waitForInclusion(chain.execution, sent.hash, { timeoutMs: flags['wait-timeout'] * 1000 });
    if (status.receipt?.status !== 1) throw new SvcError('TX_FAILED', `the registration ${sent.hash} failed in block ${status.receipt?.blockNumber}: ${status.receipt?.error ?? 'no receipt'}`);
    this.say(`Block:       ${status.receipt.blockNumber}`);
    return { ...out, block: status.block };
  }
}
