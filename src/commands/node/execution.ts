import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand } from '../../cli/base.js';
import { historyFlag, historyMode, loadFaucetKey, logLevelFlag, nodeLogger, readJwtSecret, stopOnSignal } from '../../cli/node-setup.js';
import { p2pFlags, p2pKeyFileFlag, parseBootnodes } from '../../cli/p2p-flags.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../cli/flags.js';
import { ExecutionNode } from '../../node/execution/node.js';
import { DEFAULT_ACCOUNT_QUEUE, DEFAULT_GLOBAL_QUEUE } from '../../node/execution/txpool/pool.js';

export default class NodeExecution extends SvcCommand {
  static override summary = 'Run the execution layer: state, transaction pool, block import, REST (8546) and JSON-RPC (8545)';
  static override description =
    'Logs one JSON line per block and per rejection on stderr. Stops cleanly on SIGINT/SIGTERM and resumes from --data-dir on restart. The faucet uses the genesis faucet keystore (default: keystores/faucet.json beside the genesis file). ' +
    'Transactions are gossiped over libp2p (--p2p-port, default 9000; --bootnodes to join a network; --no-p2p to run alone); the peer id is kept in <data-dir>/p2p/peer-key.';
  static override examples = [
    '<%= config.bin %> node execution --genesis ./devnet/genesis.json --data-dir ./devnet/execution',
    '<%= config.bin %> node execution --genesis ./devnet/genesis.json --data-dir ./devnet/execution-2 --rest-port 8556 --rpc-port 8555 --p2p-port 9010 --bootnodes /ip4/127.0.0.1/tcp/9000/p2p/12D3KooW…',
  ];
  static override enableJsonFlag = false;
  static override flags = {
    genesis: genesisFlag,
    'data-dir': Flags.string({ description: 'LevelDB data directory', required: true }),
    host: Flags.string({ description: 'interface to listen on', default: '127.0.0.1' }),
    'rest-port': Flags.integer({ description: 'REST port', default: 8546, min: 0, max: 65535 }),
    'rpc-port': Flags.integer({ description: 'JSON-RPC port', default: 8545, min: 0, max: 65535 }),
    'engine-jwt-secret': Flags.string({ description: 'file with a 32-byte hex secret: non-loopback engine callers must send an HS256 JWT made with it' }),
    'faucet-keystore': Flags.string({ description: 'genesis faucet wallet file (default: keystores/faucet.json beside the genesis, if present)' }),
    'faucet-password-file': Flags.string({ description: 'password of the faucet keystore (else SVC_FAUCET_PASSWORD; devnet default "svc-devnet")' }),
    'pool-capacity': Flags.integer({ description: 'most transactions the pool holds before evicting the cheapest', default: 50_000, min: 1 }),
    'pool-account-queue': Flags.integer({ description: 'how far past its next nonce a sender may queue transactions (geth AccountQueue)', default: DEFAULT_ACCOUNT_QUEUE, min: 1 }),
    'pool-global-queue': Flags.integer({ description: 'most queued (waiting for a missing nonce) transactions across all senders (geth GlobalQueue)', default: DEFAULT_GLOBAL_QUEUE, min: 1 }),
    'rate-limit': Flags.integer({ description: 'transaction submissions per second per client IP and per sender (0 = unlimited)', default: 200, min: 0 }),
    'verifier-threads': Flags.integer({ description: 'signature verification worker threads (default: one per core)', min: 1, max: 64 }),
    history: historyFlag,
    ...p2pFlags(),
    ...p2pKeyFileFlag(),
    'log-level': logLevelFlag,
  };

  async run() {
    const { flags } = await this.parse(NodeExecution);
    const log = nodeLogger('execution', flags['log-level']);
    const bootnodes = parseBootnodes(flags.bootnodes, '--bootnodes');
    if (!flags.p2p && bootnodes.length > 0) log.warn('--bootnodes ignored: --no-p2p runs the node alone');
    const genesisPath = resolve(flags.genesis ?? defaultGenesisPath());
    const genesis = await loadGenesisFile(genesisPath);
    const engineJwtSecret = flags['engine-jwt-secret'] ? await readJwtSecret(flags['engine-jwt-secret'], '--engine-jwt-secret') : undefined;
    const faucet = await loadFaucetKey(genesisPath, genesis, flags['faucet-keystore'], flags['faucet-password-file'], log);
    const node = await ExecutionNode.start({
      genesis,
      dataDir: resolve(flags['data-dir']),
      host: flags.host,
      restPort: flags['rest-port'],
      rpcPort: flags['rpc-port'],
      engineJwtSecret,
      faucet,
      log,
      verifierThreads: flags['verifier-threads'],
      poolCapacity: flags['pool-capacity'],
      poolQueue: { accountQueue: flags['pool-account-queue'], globalQueue: flags['pool-global-queue'] },
      submitRatePerIp: flags['rate-limit'],
      history: historyMode(flags.history, genesis),
      ...(flags.p2p ? { p2p: { host: flags['p2p-host'], port: flags['p2p-port'], bootnodes, maxPeers: flags['max-peers'], keyFile: flags['p2p-key-file'] ? resolve(flags['p2p-key-file']) : undefined } } : {}),
    });
    await stopOnSignal(log, () => node.stop(), { logFailure: true });
  }
}
