/**
 * The single-process deployment: execution, beacon and validator clients in one process. They
 * still talk only through their HTTP interfaces (on loopback), exactly as separate processes do,
 * and each of execution and beacon runs its own libp2p host, on its own port.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MlDsaKeyPair } from '../core/crypto/mldsa.js';
import { P2pError } from './p2p/errors.js';
import { NodeError } from './shared/errors.js';
import type { Genesis } from '../core/genesis/genesis.js';
import type { Logger } from '../util/log.js';
import type { SigningKeys } from '../wallet/derivation.js';
import { BeaconNode } from './beacon/node.js';
import { ExecutionNode } from './execution/node.js';
import type { ExecutionP2pOptions } from './execution/p2p.js';
import { ValidatorClient } from './validator/client.js';
import { adoptOneKeyDataDirs, openValidatorDataDir } from './validator/data-dir.js';
import type { SlashingProtectionDb } from './validator/slashing/protection.js';
import type { TlsPair } from './shared/tls.js';
import type { HistoryMode } from './execution/pruning.js';
import { beaconRoutes } from '../api/routes/beacon.js';

/** The two libp2p hosts of a single-process node: one interface, a port and bootnodes each. */
export interface AllP2pOptions {
  host: string;
  beaconPort: number;
  executionPort: number;
  beaconBootnodes: string[];
  executionBootnodes: string[];
  /** Peer target of each host (`--max-peers`). */
  maxPeers?: number | undefined;
}

/**
 * Why the two hosts cannot start, if they share a port: the second would fail to bind after the
 * first had started, with an error naming neither flag. Port 0 asks each for a free port, so two
 * zeros differ.
 */
export function p2pPortClash(p: Pick<AllP2pOptions, 'beaconPort' | 'executionPort'>): string | undefined {
  if (p.beaconPort === 0 || p.beaconPort !== p.executionPort) return undefined;
  return `--p2p-port (beacon) and --execution-p2p-port are both ${p.beaconPort}: execution and beacon each run a libp2p host and need distinct ports`;
}

/** How to run every layer in one process. */
export interface AllOptions {
  genesis: Genesis;
  dataDir: string;
  host: string;
  restPort: number;
  rpcPort: number;
  beaconPort: number;
  /** Past states execution keeps (`--history`). */
  history: HistoryMode;
  /** PEM certificate and key for the beacon: it then serves HTTPS/WSS only (see BeaconNode). */
  beaconTls?: TlsPair;
  faucet?: { key: MlDsaKeyPair; address: string };
  /** The libp2p hosts; omitted: every layer runs alone (`--no-p2p`). */
  p2p?: AllP2pOptions;
  /** Unlocked validator keys run by this process (one validator client holds them all). */
  validators: SigningKeys[];
  /** Port of the validator client's metrics server (every key's series, on `host`); absent: none. */
  validatorMetricsPort?: number;
  log: (component: string) => Logger;
}

/** Handles of a running single-process node. */
export interface AllNode {
  execution: ExecutionNode;
  beacon: BeaconNode;
  /** The validator client of every key (undefined without keys). */
  validator: ValidatorClient | undefined;
  stop(): Promise<void>;
}

/**
 * The in-process validators reach a TLS beacon through fetch like any other client, so they
 * must trust its certificate; one request now turns a validator retrying forever on a
 * certificate error into one clear start-up failure.
 */
async function checkBeaconTrusted(url: string): Promise<void> {
  try {
    await (await fetch(`${url}${beaconRoutes.health.path}`, { signal: AbortSignal.timeout(10_000) })).arrayBuffer();
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new NodeError(
      'TLS_UNTRUSTED',
      `the validators cannot reach the beacon at ${url}: ${cause} (start svc with NODE_EXTRA_CA_CERTS=<the certificate or its CA> and a certificate naming --host)`,
    );
  }
}

/**
 * Starts execution, then the beacon on it, then one validator client holding every key, with its
 * data in `<data-dir>/validator` (the per-key `validator-<address>` directories of earlier
 * versions are adopted into it on first start: see adoptOneKeyDataDirs).
 */
export async function startAll(o: AllOptions): Promise<AllNode> {
  const clash = o.p2p && p2pPortClash(o.p2p);
  if (clash) throw new P2pError('P2P_PORT_CLASH', clash);
  const executionP2p: ExecutionP2pOptions | undefined = o.p2p && { host: o.p2p.host, port: o.p2p.executionPort, bootnodes: o.p2p.executionBootnodes, maxPeers: o.p2p.maxPeers };
  const execution = await ExecutionNode.start({
    genesis: o.genesis,
    dataDir: join(o.dataDir, 'execution'),
    host: o.host,
    restPort: o.restPort,
    rpcPort: o.rpcPort,
    log: o.log('execution'),
    history: o.history,
    ...(o.faucet ? { faucet: o.faucet } : {}),
    ...(executionP2p ? { p2p: executionP2p } : {}),
  });
  const started: { beacon?: BeaconNode; validator?: ValidatorClient; db?: SlashingProtectionDb } = {};
  const stop = async () => {
    await started.validator?.stop().catch(() => undefined);
    await started.db?.close().catch(() => undefined);
    await started.beacon?.stop();
    await execution.stop();
  };
  try {
    started.beacon = await BeaconNode.start({
      genesis: o.genesis,
      dataDir: join(o.dataDir, 'beacon'),
      host: o.host,
      port: o.beaconPort,
      executionUrl: execution.restUrl,
      log: o.log('beacon'),
      ...(o.beaconTls ? { tls: o.beaconTls } : {}),
      ...(o.p2p ? { p2p: { host: o.p2p.host, port: o.p2p.beaconPort, bootnodes: o.p2p.beaconBootnodes, maxPeers: o.p2p.maxPeers } } : {}),
    });
    if (o.beaconTls && o.validators.length > 0) await checkBeaconTrusted(started.beacon.url);
    if (o.validators.length > 0) {
      const token = (await readFile(started.beacon.tokenFile, 'utf8')).trim();
      const dir = join(o.dataDir, 'validator');
      const log = o.log('validator');
      started.db = await openValidatorDataDir(dir, o.genesis);
      const oneKeyDirs = o.validators.map((k) => ({ dir: join(o.dataDir, `validator-${k.address}`), address: k.address }));
      for (const d of await adoptOneKeyDataDirs(started.db, dir, oneKeyDirs, o.genesis)) log.info('one-key validator data directory adopted into the shared one', { from: d, into: dir });
      const metrics = o.validatorMetricsPort === undefined ? {} : { metricsPort: o.validatorMetricsPort, metricsHost: o.host };
      const client = new ValidatorClient({ genesis: o.genesis, keys: o.validators, beaconUrl: started.beacon.url, token, slashingDb: started.db, log, dataDir: dir, ...metrics });
      await client.start();
      started.validator = client;
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { execution, beacon: started.beacon, validator: started.validator, stop };
}
