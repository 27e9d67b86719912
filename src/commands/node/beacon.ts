import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand } from '../../cli/base.js';
import { loadTlsFlags, logLevelFlag, nodeLogger, readJwtSecret, stopOnSignal, tlsFlags } from '../../cli/node-setup.js';
import { p2pFlags, p2pKeyFileFlag, parseBootnodes } from '../../cli/p2p-flags.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../cli/flags.js';
import { BeaconNode } from '../../node/beacon/node.js';

export default class NodeBeacon extends SvcCommand {
  static override summary = 'Run the beacon layer: proposer selection, RANDAO, fork choice, finality, rewards, REST and /ws (8080)';
  static override description =
    'Needs an execution node (--execution-url; waits up to 30 s for it at start). Validators authenticate with the bearer token in --validator-token-file (issued into the data directory when absent). ' +
    'With --tls-cert and --tls-key (PEM, given together) REST and /ws are served over HTTPS/WSS only, so the token never crosses the network in clear; ' +
    'the certificate should name the address clients use (subjectAltName). Clients (svc node validator, fetch, ws) trust a self-signed or private-CA certificate when started with NODE_EXTRA_CA_CERTS=<ca.pem> (read once at process start). ' +
    'Blocks and attestations are gossiped over libp2p and a beacon that is behind catches up from its peers by range sync (--p2p-port, default 9000; --bootnodes to join a network; --no-p2p to run alone); the peer id is kept in <data-dir>/p2p/peer-key. ' +
    'A beacon without validators follows the network read-only. ' +
    'Stops on SIGINT/SIGTERM and resumes from --data-dir.';
  static override examples = [
    '<%= config.bin %> node beacon --genesis ./devnet/genesis.json --data-dir ./devnet/beacon --execution-url http://127.0.0.1:8546',
    '<%= config.bin %> node beacon --genesis ./devnet/genesis.json --data-dir ./devnet/beacon --tls-cert ./tls/beacon.crt --tls-key ./tls/beacon.key',
    '<%= config.bin %> node beacon --genesis ./devnet/genesis.json --data-dir ./devnet/beacon-2 --port 8081 --execution-url http://127.0.0.1:8556 --p2p-port 9010 --bootnodes /ip4/127.0.0.1/tcp/9000/p2p/12D3KooW…',
  ];
  static override enableJsonFlag = false;
  static override flags = {
    genesis: genesisFlag,
    'data-dir': Flags.string({ description: 'LevelDB data directory', required: true }),
    host: Flags.string({ description: 'interface to listen on', default: '127.0.0.1' }),
    port: Flags.integer({ description: 'REST and WebSocket port', default: 8080, min: 0, max: 65535 }),
    'execution-url': Flags.string({ description: 'execution node REST URL', default: 'http://127.0.0.1:8546' }),
    'engine-jwt-secret': Flags.string({ description: 'file with the 32-byte hex engine secret (when execution is not on loopback)' }),
    'validator-token-file': Flags.string({ description: 'bearer token file for validator calls (default: <data-dir>/validator-token, created if absent)' }),
    ...tlsFlags('PEM certificate (chain): serve HTTPS and WSS (needs --tls-key)'),
    ...p2pFlags(),
    ...p2pKeyFileFlag(),
    'log-level': logLevelFlag,
  };

  async run() {
    const { flags } = await this.parse(NodeBeacon);
    const log = nodeLogger('beacon', flags['log-level']);
    const bootnodes = parseBootnodes(flags.bootnodes, '--bootnodes');
    if (!flags.p2p && bootnodes.length > 0) log.warn('--bootnodes ignored: --no-p2p runs the node alone');
    // The TLS files are checked before anything else so a bad one is reported first and alone.
    const tls = await loadTlsFlags(flags, flags.host, log);
    const genesis = await loadGenesisFile(resolve(flags.genesis ?? defaultGenesisPath()));
    const engineJwtSecret = flags['engine-jwt-secret'] ? await readJwtSecret(flags['engine-jwt-secret'], '--engine-jwt-secret') : undefined;
    const node = await BeaconNode.start({
      genesis,
      dataDir: resolve(flags['data-dir']),
      host: flags.host,
      port: flags.port,
      executionUrl: flags['execution-url'],
      engineJwtSecret,
      tokenFile: flags['validator-token-file'] ? resolve(flags['validator-token-file']) : undefined,
      tls,
      ...(flags.p2p ? { p2p: { host: flags['p2p-host'], port: flags['p2p-port'], bootnodes, maxPeers: flags['max-peers'], keyFile: flags['p2p-key-file'] ? resolve(flags['p2p-key-file']) : undefined } } : {}),
      log,
    });
    await stopOnSignal(log, () => node.stop(), { logFailure: false });
  }
}
