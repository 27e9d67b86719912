import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { readPassword } from '../../cli/secrets.js';
import { bridgeGasPriceFlag, chainFromFlag, parseWei, sourcePasswordFileFlag } from '../../cli/bridge-flags.js';
import { connectChain, unlockSigner } from '../../client/bridge-ops.js';
import { type RelayAction, Relayer } from '../../client/bridge-relayer.js';

/** Pass interval when neither the flag nor either chain's view gives the source's slot time. */
const FALLBACK_INTERVAL_S = 2;

export default class BridgeRelay extends SvcCommand {
  static override summary = 'Relay BIDs from a source chain to a destination until stopped: release, complete, refund';
  static override description =
    "Every --interval (default one slot of the source) it lists the source's FINALIZED BIDs bound for the destination and releases each on the destination with its proof (the source's finalised header, the lock in its state, its validators' BID signatures), paid by --from; " +
    "once a release is final on the destination it completes the BID on the source, and it refunds EXPIRED BIDs once the destination has finalised past their timeout without a release (both paid by --source-from; without it the relayer only releases). " +
    'What to do comes from the chains, so a restart resumes where it stopped; an operation a chain refuses is logged with its code and not retried for a while. It is trusted with nothing: a wrong proof is refused by the chain. ' +
    'With --json every action is one JSON line. SIGINT or SIGTERM stops it cleanly (exit 0).';
  static override examples = [
    '<%= config.bin %> bridge relay --from relayer-b --source-from relayer-a --source ./a --dest ./b',
    '<%= config.bin %> bridge relay --from relayer-b --source http://127.0.0.1:8080,http://127.0.0.1:8546 --dest http://127.0.0.1:8081,http://127.0.0.1:8547 --json',
  ];
  static override flags = {
    from: Flags.string({ description: 'wallet on the destination chain that pays releases', required: true }),
    'source-from': Flags.string({ description: 'wallet on the source chain that pays completions and refunds' }),
    source: Flags.string({ description: 'the chain BIDs are locked on: a devnet directory or BEACON_URL,EXECUTION_URL (default: the running devnet)', helpValue: 'DIR_OR_URLS' }),
    dest: Flags.string({ description: "the chain they are released on (default: the running devnet's counterpart)", helpValue: 'DIR_OR_URLS' }),
    interval: Flags.integer({ description: 'seconds between passes (default: one slot of the source)', min: 1, max: 3600 }),
    'gas-price': bridgeGasPriceFlag,
    'password-file': passwordFileFlag,
    'source-password-file': sourcePasswordFileFlag,
    once: Flags.boolean({ description: 'one pass, then exit' }),
  };

  async run(): Promise<undefined> {
    const { flags } = await this.parse(BridgeRelay);
    const gasPrice = parseWei(flags['gas-price'], '--gas-price');
    const sourceSpec = await chainFromFlag(flags.source, '--source', 'running');
    const destSpec = await chainFromFlag(flags.dest, '--dest', 'counterpart');
    const o = gasPrice === undefined ? {} : { gasPrice };
    const source = await connectChain(sourceSpec, o);
    const dest = await connectChain(destSpec, o);
    const destSigner = await unlockSigner(flags.from, () => readPassword(flags['password-file']));
    const sourceSigner = flags['source-from'] === undefined ? undefined : await unlockSigner(flags['source-from'], () => readPassword(flags['source-password-file'] ?? flags['password-file']));
    const slotSeconds = source.slotSeconds ?? (await dest.beacon.counterparts()).counterparts.find((c) => c.genesis_hash.toLowerCase() === source.genesisHash)?.slot_seconds ?? FALLBACK_INTERVAL_S;
    const json = this.jsonEnabled();
    const log = (a: RelayAction) => {
      if (json) process.stdout.write(JSON.stringify(a) + '\n');
      else process.stdout.write(`${a.time} ${a.action}${a.op ? ` ${a.op}` : ''}${a.bid ? ` ${a.bid}` : ''}${a.chain ? ` on ${a.chain}` : ''}${a.tx_hash ? ` tx ${a.tx_hash}` : ''}${a.ok === false ? ' FAILED' : ''}${a.code ? ` ${a.code}` : ''}${a.message ? `: ${a.message}` : ''}\n`);
    };
    const relayer = new Relayer({ source, dest, destSigner, ...(sourceSigner ? { sourceSigner } : {}), intervalMs: (flags.interval ?? slotSeconds) * 1000, log });
    if (flags.once) {
      await relayer.pass();
      return undefined;
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    await relayer.run(stop.signal);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    return undefined;
  }
}
