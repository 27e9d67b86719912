import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { readPassword } from '../../cli/secrets.js';
import { bridgeGasPriceFlag, chainFromFlag, parseTokens, parseWei } from '../../cli/bridge-flags.js';
import { toHex, utf8 } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { type Genesis, canonicalJson, genesisHash } from '../../core/genesis/genesis.js';
import { type BidSignature, BridgeError, BridgeOp } from '../../core/bridge/types.js';
import { devnetRegistrationSignatures } from '../../devnet/bridge.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { readManifest } from '../../devnet/manifest.js';
import { type BridgeChain, type BridgeSigner, connectChain, submitBridgeOp, unlockSigner } from '../../client/bridge-ops.js';
import { beaconClients, gatherRegistration } from '../../client/bridge-register.js';
import { parseExecutionUrl } from '../../client/execution.js';
import { waitForInclusion } from '../../client/send.js';

export default class BridgeRegister extends SvcCommand {
  static override summary = "Register a counterpart chain on a chain, signed by ≥ 2/3 of that chain's stake";
  static override description =
    "Asks the chain's validators to register the counterpart (its whole genesis document) with an allowance moved from the chain's bridge reserve into the counterpart's ledger: the request goes to every beacon of the chain (a devnet directory's nodes, else --on's beacon and each --beacon), validator clients whose operator accepts the counterpart (svc node validator --bridge-accept-counterparts) sign it, and once the signers hold 2/3 of the active stake the register operation carrying their signatures is sent from --from. " +
    'Exits 1 with BRIDGE_REGISTRATION_UNAUTHORIZED if too few sign before --sign-timeout. With --wait, exits 0 once the registration is in a block, 1 if it failed there or --wait-timeout passes first.';
  static override examples = ['<%= config.bin %> bridge register --genesis ./b/genesis/genesis.json --allowance 100000 --from alice --on ./a --wait'];
  static override flags = {
    genesis: Flags.string({ description: "the counterpart's genesis.json", required: true, helpValue: 'FILE' }),
    allowance: Flags.string({ description: "tokens moved from this chain's unallocated bridge reserve into the counterpart's ledger: the most its releases can ever pay beyond what completed locks toward it add", default: '0', helpValue: 'TOKENS' }),
    'devnet-keys': Flags.boolean({ description: "--on is a devnet directory: sign with its own validators' keys (a devnet holds them all) instead of asking its validator clients" }),
    from: Flags.string({ description: 'sending wallet: name, address or file path', required: true }),
    on: Flags.string({ description: 'the chain to register on: a devnet directory or BEACON_URL,EXECUTION_URL (default: the running devnet)', helpValue: 'DIR_OR_URLS' }),
    beacon: Flags.string({ description: "another beacon of that chain whose validators may sign (repeatable)", multiple: true, helpValue: 'URL' }),
    'gas-price': bridgeGasPriceFlag,
    'password-file': passwordFileFlag,
    'sign-timeout': Flags.integer({ description: 'seconds to wait for validators holding 2/3 of the stake to sign (they look once per epoch: give it more than one)', default: 900, min: 1, max: 86_400 }),
    wait: Flags.boolean({ description: 'wait until the registration is in a block' }),
    'wait-timeout': Flags.integer({ description: 'with --wait: seconds before giving up (exit 1)', default: 60, min: 1, max: 86_400 }),
  };

  async run() {
    const { flags } = await this.parse(BridgeRegister);
    const genesis = await loadGenesisFile(flags.genesis);
    const allowance = parseTokens(flags.allowance, '--allowance');
    const gasPrice = parseWei(flags['gas-price'], '--gas-price');
    const spec = await chainFromFlag(flags.on, '--on', 'running');
    const chain = await connectChain(spec, gasPrice === undefined ? {} : { gasPrice });
    // A counterpart the chain knows (from its genesis or an earlier registration) would only fail in the end: say so before asking anyone to sign.
    const hash = toHex(genesisHash(genesis));
    const known = (await chain.beacon.counterparts()).counterparts.find((c) => c.genesis_hash.toLowerCase() === hash);
    if (known) throw new BridgeError('BRIDGE_ALREADY_REGISTERED', `${genesis.chain_id} (${hash}) is already a counterpart of ${chain.chainId} (source: ${known.source ?? 'registration'}): nothing to register`);
    const signer = await unlockSigner(flags.from, () => readPassword(flags['password-file']));
    const devnet = spec.dir ? readManifest(spec.dir) : null;
    if (flags['devnet-keys']) {
      if (!devnet || !spec.genesis) throw new SvcError('USAGE', '--devnet-keys needs --on to be a devnet directory (it holds the validator keys)');
      const signatures = await devnetRegistrationSignatures(devnet, spec.genesis, genesis, allowance);
      return this.send(flags, chain, signer, genesis, allowance, signatures, { id: null, signed_stake: null, active_stake: null });
    }
    const urls = [spec.beaconUrl, ...(devnet?.nodes.filter((n) => n.validators.length > 0).map((n) => n.endpoints.beacon) ?? []), ...(flags.beacon ?? []).map((u) => parseExecutionUrl(u, '--beacon'))];
    this.say(`Asking ${new Set(urls).size} beacon(s) of ${chain.chainId} for signatures to register ${genesis.chain_id}`);
    let last = '';
    const { view, signatures } = await gatherRegistration(beaconClients(urls), genesis, allowance, {
      deadline: Date.now() + flags['sign-timeout'] * 1000,
      pollMs: 1000,
      onProgress: (v) => {
        const line = `Signed:      ${v.signatures.length} validator(s), ${v.signed_stake} of ${v.active_stake} stake`;
        if (line !== last) this.say((last = line));
      },
    });
    return this.send(flags, chain, signer, genesis, allowance, signatures, view);
  }

  private async send(
    flags: { wait: boolean; 'wait-timeout': number },
    chain: BridgeChain,
    signer: BridgeSigner,
    genesis: Genesis,
    allowance: bigint,
    signatures: BidSignature[],
    view: { id: string | null; signed_stake: string | null; active_stake: string | null },
  ) {
    const sent = await submitBridgeOp(chain, signer, { op: BridgeOp.Register, body: { genesisJson: utf8(canonicalJson(genesis)), allowance, signatures } });
    const out = {
      tx_hash: sent.hash,
      on: chain.chainId,
      registration: view.id,
      registered: { chain_id: genesis.chain_id, genesis_hash: toHex(genesisHash(genesis)) },
      allowance: allowance.toString(),
      signers: signatures.map((s) => s.validatorIndex),
      signed_stake: view.signed_stake,
      active_stake: view.active_stake,
      from: sent.from,
      gas_limit: sent.gas_limit,
      pool_status: sent.pool_status,
    };
    this.say(`Register tx: ${sent.hash}`);
    this.say(`Registers:   ${genesis.chain_id} (${out.registered.genesis_hash}) on ${chain.chainId}, allowance ${allowance} wei`);
    if (!flags.wait) return out;
    const status = await waitForInclusion(chain.execution, sent.hash, { timeoutMs: flags['wait-timeout'] * 1000 });
    if (status.receipt?.status !== 1) throw new SvcError('TX_FAILED', `the registration ${sent.hash} failed in block ${status.receipt?.blockNumber}: ${status.receipt?.error ?? 'no receipt'}`);
    this.say(`Block:       ${status.receipt.blockNumber}`);
    return { ...out, block: status.block };
  }
}
