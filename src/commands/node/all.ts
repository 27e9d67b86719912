import { Flags } from '@oclif/core';
import { readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { SvcCommand, UsageError } from '../../cli/base.js';
import { historyFlag, historyMode, loadFaucetKey, loadTlsFlags, logLevelFlag, nodeLogger, stopOnSignal, tlsFlags, unlockSigningKeystore } from '../../cli/node-setup.js';
import { p2pFlags, parseBootnodes } from '../../cli/p2p-flags.js';
import { DEFAULT_P2P_PORT } from '../../node/p2p/types.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../cli/flags.js';
import { type AllP2pOptions, p2pPortClash, startAll } from '../../node/all.js';

export default class NodeAll extends SvcCommand {
  static override summary = 'Run execution, beacon and validator clients in one process (single-process deployment)';
  static override description =
    'The layers talk through the same HTTP interfaces as separate processes, on loopback. Validators: every keystores/validator-*.json beside the genesis (or --keystores DIR). ' +
    'With --tls-cert and --tls-key the beacon serves HTTPS/WSS only; the in-process validators then need the certificate trusted (NODE_EXTRA_CA_CERTS=<ca.pem>) and naming --host, which is checked at start. ' +
    'Execution and beacon each run a libp2p host: the beacon on --p2p-port (default 9000), execution on --execution-p2p-port (default --p2p-port + 1); the two must differ. ' +
    '--bootnodes are the beacon\'s, --execution-bootnodes execution\'s; --no-p2p runs both alone. ' +
    'Stops on SIGINT/SIGTERM and resumes from --data-dir.';
  static override examples = ['<%= config.bin %> node all --genesis ./devnet/genesis.json --data-dir ./devnet/all'];
  static override enableJsonFlag = false;
  static override flags = {
    genesis: genesisFlag,
    'data-dir': Flags.string({ description: 'data directory (execution/, beacon/, validator-*/ inside)', required: true }),
    host: Flags.string({ description: 'interface to listen on', default: '127.0.0.1' }),
    'rest-port': Flags.integer({ description: 'execution REST port', default: 8546, min: 0, max: 65535 }),
    'rpc-port': Flags.integer({ description: 'JSON-RPC port', default: 8545, min: 0, max: 65535 }),
    'beacon-port': Flags.integer({ description: 'beacon REST and WebSocket port', default: 8080, min: 0, max: 65535 }),
    keystores: Flags.string({ description: 'directory of validator-*.json keystores (default: keystores/ beside the genesis)' }),
    'password-file': Flags.string({ description: 'validator keystores password (else SVC_VALIDATOR_PASSWORD; devnet default "svc-devnet")' }),
    'faucet-password-file': Flags.string({ description: 'faucet keystore password (else SVC_FAUCET_PASSWORD; devnet default "svc-devnet")' }),
    ...tlsFlags('PEM certificate (chain) for the beacon: HTTPS and WSS (needs --tls-key)'),
    ...p2pFlags(),
    'p2p-port': Flags.integer({ description: 'beacon libp2p TCP port (0: any free port)', default: DEFAULT_P2P_PORT, min: 0, max: 65535 }),
    'execution-p2p-port': Flags.integer({ description: 'execution libp2p TCP port (default: --p2p-port + 1; 0: any free port)', min: 0, max: 65535 }),
    bootnodes: Flags.string({ description: 'comma-separated beacon multiaddrs /ip4/…/tcp/…/p2p/<peer id> for the beacon to dial' }),
    'validator-metrics-port': Flags.integer({ description: 'Prometheus metrics port of the validator client, which holds every keystore (series per key labelled validator=<index>); default: no validator metrics server', min: 1, max: 65535, exclusive: ['validator-metrics-ports'] }),
    'validator-metrics-ports': Flags.string({ description: 'deprecated (one validator client now holds every key): comma-separated ports, one per validator keystore; only the first is served, as --validator-metrics-port' }),
    'execution-bootnodes': Flags.string({ description: 'comma-separated execution multiaddrs /ip4/…/tcp/…/p2p/<peer id> for execution to dial' }),
    history: historyFlag,
    'log-level': logLevelFlag,
  };

  async run() {
    const { flags } = await this.parse(NodeAll);
    const level = flags['log-level'];
    const log = nodeLogger('all', level);
    const p2p = flags.p2p ? allP2pOptions(flags) : undefined;
    const beaconTls = await loadTlsFlags(flags, flags.host, log);
    const genesisPath = resolve(flags.genesis ?? defaultGenesisPath());
    const genesis = await loadGenesisFile(genesisPath);
    const dir = resolve(flags.keystores ?? join(dirname(genesisPath), 'keystores'));
    // Index order (validator-2 before validator-10), the order --validator-metrics-ports follows.
    const indexOf = (f: string) => Number(/^validator-(\d+)\.json$/.exec(f)![1]);
    const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => /^validator-\d+\.json$/.test(f)).sort((a, b) => indexOf(a) - indexOf(b));
    const metricsPorts = parseMetricsPorts(flags['validator-metrics-ports'], files.length);
    if (metricsPorts && metricsPorts.length > 1) log.warn('--validator-metrics-ports is deprecated: one validator client holds every key and serves every key\'s series on the first port; the others stay unused (use --validator-metrics-port)', { port: metricsPorts[0], unused: metricsPorts.slice(1) });
    const metricsPort = flags['validator-metrics-port'] ?? metricsPorts?.[0];
    const validators = [];
    for (const f of files) validators.push(await unlockSigningKeystore(join(dir, f), genesis, { passwordFile: flags['password-file'], envVar: 'SVC_VALIDATOR_PASSWORD', what: 'validator', flag: '--password-file' }));
    if (validators.length === 0) log.warn('no validator keystores: running a read-only node (execution + beacon)', { looked_in: dir });
    const faucet = await loadFaucetKey(genesisPath, genesis, undefined, flags['faucet-password-file'], log);
    const node = await startAll({
      genesis,
      dataDir: resolve(flags['data-dir']),
      host: flags.host,
      restPort: flags['rest-port'],
      rpcPort: flags['rpc-port'],
      beaconPort: flags['beacon-port'],
      history: historyMode(flags.history, genesis),
      ...(beaconTls ? { beaconTls } : {}),
      ...(p2p ? { p2p } : {}),
      validators,
      ...(metricsPort !== undefined ? { validatorMetricsPort: metricsPort } : {}),
      ...(faucet ? { faucet } : {}),
      log: (component) => nodeLogger(component, level),
    });
    log.info('all layers started', {
      execution: node.execution.restUrl,
      rpc: node.execution.rpcUrl,
      beacon: node.beacon.url,
      validators: validators.length,
      beacon_p2p: node.beacon.net?.host.multiaddrs() ?? 'off',
      execution_p2p: node.execution.p2p?.multiaddrs() ?? 'off',
    });
    await stopOnSignal(log, () => node.stop(), { logFailure: false });
  }
}

/** --validator-metrics-ports: one port (1-65535, distinct) per validator keystore, or a usage error (exit 2). */
export function parseMetricsPorts(raw: string | undefined, validators: number): number[] | undefined {
  if (raw === undefined) return undefined;
  const ports = raw.split(',').map((p) => p.trim());
  if (ports.length !== validators) throw new UsageError(`--validator-metrics-ports lists ${ports.length} port(s) for ${validators} validator keystore(s): give one per keystore`);
  const out = ports.map((p) => {
    const n = /^\d{1,5}$/.test(p) ? Number(p) : NaN;
    if (!(n >= 1 && n <= 65535)) throw new UsageError(`--validator-metrics-ports: ${JSON.stringify(p)} is not a port (1-65535)`);
    return n;
  });
  if (new Set(out).size !== out.length) throw new UsageError('--validator-metrics-ports lists a port twice: each validator needs its own');
  return out;
}

/** The two hosts' ports and bootnodes from the flags; a clash or a bad bootnode is a usage error (exit 2). */
function allP2pOptions(flags: { 'p2p-host': string; 'p2p-port': number; 'execution-p2p-port': number | undefined; bootnodes: string | undefined; 'execution-bootnodes': string | undefined; 'max-peers': number }): AllP2pOptions {
  const beaconPort = flags['p2p-port'];
  // Port 0 picks a free port for each host; 65535 has no next port, so execution takes the one below.
  const executionPort = flags['execution-p2p-port'] ?? (beaconPort === 0 ? 0 : beaconPort === 65535 ? 65534 : beaconPort + 1);
  const clash = p2pPortClash({ beaconPort, executionPort });
  if (clash) throw new UsageError(clash);
  return {
    host: flags['p2p-host'],
    beaconPort,
    executionPort,
    beaconBootnodes: parseBootnodes(flags.bootnodes, '--bootnodes'),
    executionBootnodes: parseBootnodes(flags['execution-bootnodes'], '--execution-bootnodes'),
    maxPeers: flags['max-peers'],
  };
}
