import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand } from '../../cli/base.js';
import { readJwtSecret } from '../../cli/node-setup.js';
import { SvcError } from '../../core/errors.js';
import { defaultGenesisPath, loadGenesisFile } from '../../genesis/load.js';
import { BeaconNode } from '../../node/beacon/node.js';
import { createLogger, isLogLevel } from '../../util/log.js';

export default class NodeBeacon extends SvcCommand {
  static override summary = 'Run the beacon layer: proposer selection, RANDAO, fork choice, finality, rewards, REST and /ws (8080)';
  static override description =
    'Needs a running execution node (--execution-url). Validators authenticate with the bearer token in --validator-token-file (issued into the data directory when absent). Stops on SIGINT/SIGTERM and resumes from --data-dir.';
  static override examples = ['<%= config.bin %> node beacon --genesis ./devnet/genesis.json --data-dir ./devnet/beacon --execution-url http://127.0.0.1:8546'];
  static override enableJsonFlag = false;
  static override flags = {
    genesis: Flags.string({ description: 'genesis file (default: SVC_GENESIS, else ./genesis.json)' }),
    'data-dir': Flags.string({ description: 'LevelDB data directory', required: true }),
    host: Flags.string({ description: 'interface to listen on', default: '127.0.0.1' }),
    port: Flags.integer({ description: 'REST and WebSocket port', default: 8080, min: 0, max: 65535 }),
    'execution-url': Flags.string({ description: 'execution node REST URL', default: 'http://127.0.0.1:8546' }),
    'engine-jwt-secret': Flags.string({ description: 'file with the 32-byte hex engine secret (when execution is not on loopback)' }),
    'validator-token-file': Flags.string({ description: 'bearer token file for validator calls (default: <data-dir>/validator-token, created if absent)' }),
    'log-level': Flags.string({ description: 'debug, info, warn or error', default: 'info' }),
  };

  async run() {
    const { flags } = await this.parse(NodeBeacon);
    if (!isLogLevel(flags['log-level'])) throw new SvcError('USAGE', `--log-level must be debug, info, warn or error, got ${flags['log-level']}`);
    const log = createLogger('beacon', flags['log-level']);
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
      log,
    });
    await new Promise<void>((done) => {
      const stop = (signal: string) => {
        log.info('shutting down', { signal });
        node.stop().then(done, done);
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
  }
}
