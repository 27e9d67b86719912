import { Flags } from '@oclif/core';
import { readRegistrationPolicy } from '../../node/validator/bridge-registration-duty.js';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SvcCommand } from '../../cli/base.js';
import { logLevelFlag, nodeLogger, stopOnSignal } from '../../cli/node-setup.js';
import { loadValidatorKeystores } from '../../cli/validator-keys.js';
import { parseBearerToken, resolveBeaconUrl } from '../../client/beacon.js';
import { backendFromEnv, initSignatureBackend } from '../../core/crypto/mldsa.js';
import { SvcError } from '../../core/errors.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { defaultGenesisPath, genesisFlag } from '../../cli/flags.js';
import { ValidatorClient } from '../../node/validator/client.js';
import { openValidatorDataDir } from '../../node/validator/data-dir.js';

export default class NodeValidator extends SvcCommand {
  static override summary = 'Run a validator client for one or many keys: propose blocks and attest through the beacon API, with slashing protection';
  static override description =
    'Runs every key given (--keystore, repeatable, and/or every *.json of --keystores-dir; one password for all) in one process: one beacon connection and /ws stream, proposer duties fetched once per epoch for all keys, one slashing-protection database under --data-dir holding every key\'s history, one metrics server (process totals plus service_validator_key_* series labelled validator=<index>). Proposes at the slots the beacon assigns (the beacon builds each block with execution\'s payload; the validator adds its RANDAO reveal and VRF proof and signs it), attests once per epoch, and records every message in the slashing-protection database under --data-dir before signing it. Subscribes to the beacon\'s /ws event stream and reacts to new_block at once (early attestation, duties of a new epoch) and to head (duties the new head\'s branch draws differently are fetched again); the slot timer still drives proposals and the attestation deadline, and while the stream is down the client polls the beacon\'s head each slot instead, reconnecting with capped exponential backoff (250 ms to 5 s, jittered). Logs one JSON line per duty on stderr; serves Prometheus metrics on --metrics-port (service_validator_beacon_ws_connected says whether the stream is up). Stops cleanly on SIGINT/SIGTERM. Export or import the slashing-protection history (EIP-3076) with `svc node validator slashing-protection export|import` while the client is stopped.';
  static override examples = [
    '<%= config.bin %> node validator --keystore ./devnet/keystores/validator-0.json --genesis ./devnet/genesis.json --token-file ./devnet/beacon/validator-token --data-dir ./devnet/validator-0',
    '<%= config.bin %> node validator --keystore ./devnet/keystores/validator-0.json --keystore ./devnet/keystores/validator-1.json --genesis ./devnet/genesis.json --token-file ./devnet/beacon/validator-token --data-dir ./devnet/validators',
    '<%= config.bin %> node validator --keystores-dir ./my-validator-keys --token-file ./beacon/validator-token --data-dir ./validators',
  ];
  static override enableJsonFlag = false;
  static override flags = {
    keystore: Flags.string({ description: 'validator wallet file (version 2.0); repeat for several keys', multiple: true }),
    'keystores-dir': Flags.string({ description: 'directory whose every *.json is a validator wallet file (with or without --keystore)', helpValue: 'DIR' }),
    'allow-non-genesis-keys': Flags.boolean({ description: 'accept keys that are not genesis validators of this chain (validators that joined by deposit)', default: false }),
    'password-file': Flags.string({ description: 'password of the keystores, one for all (else SVC_VALIDATOR_PASSWORD; devnet default "svc-devnet")' }),
    genesis: genesisFlag,
    'beacon-url': Flags.string({ description: 'beacon node REST URL (default: SVC_BEACON_URL, else http://127.0.0.1:8080)', helpValue: 'URL' }),
    'execution-url': Flags.string({ description: 'deprecated and ignored: RANDAO re-commitments go through the beacon, so the validator no longer talks to execution', helpValue: 'URL' }),
    'token-file': Flags.string({ description: 'file holding the bearer token the beacon accepts for validator calls', required: true }),
    'execution-jwt-secret': Flags.string({ description: 'deprecated and ignored: the beacon builds the blocks, so the validator no longer calls execution\'s engine API' }),
    'data-dir': Flags.string({ description: 'validator data directory of every key (one slashing-protection database, RANDAO generations and chain checkpoints)', required: true }),
    'metrics-host': Flags.string({ description: 'interface of the metrics server', default: '127.0.0.1' }),
    'metrics-port': Flags.integer({ description: 'Prometheus metrics port (0 = off)', default: 8547, min: 0, max: 65535 }),
    'bridge-accept-counterparts': Flags.string({
      description: 'JSON policy {"counterparts": [{"chain_id", "genesis_hash", "max_allowance"?}]}: sign the bridge registration requests of these counterparts the beacon lists (default: sign none)',
      helpValue: 'FILE',
    }),
    'log-level': logLevelFlag,
  };

  async run() {
    const { flags } = await this.parse(NodeValidator);
    const log = nodeLogger('validator', flags['log-level']);
    const genesis = await loadGenesisFile(resolve(flags.genesis ?? defaultGenesisPath()));
    const beaconUrl = resolveBeaconUrl(flags['beacon-url']);
    const tokenText = await readFile(flags['token-file'], 'utf8').catch(() => {
      throw new SvcError('SECRET_UNREADABLE', `cannot read --token-file ${flags['token-file']}`);
    });
    const token = parseBearerToken(tokenText, `--token-file ${flags['token-file']}`);
    if (flags['execution-jwt-secret']) log.warn('--execution-jwt-secret is deprecated and ignored: the beacon builds the blocks and the validator no longer calls the engine API');
    if (flags['execution-url']) log.warn('--execution-url is deprecated and ignored: the validator sends its RANDAO re-commitments through the beacon and no longer talks to execution');
    // Every block, VRF proof and vote is signed here: svc's WebAssembly signer, not noble's ~18x slower one.
    const backend = await initSignatureBackend(backendFromEnv(), (m) => log.warn(m));
    log.info('signature backend', { backend: backend.name });
    const unlocking = performance.now();
    const keys = await loadValidatorKeystores(genesis, { keystores: flags.keystore ?? [], keystoresDir: flags['keystores-dir'], passwordFile: flags['password-file'], allowNonGenesis: flags['allow-non-genesis-keys'] });
    // A start-up phase of its own (Argon2id and key derivation): its duration shows what it costs.
    log.info('validator keys unlocked', { keys: keys.length, ms: Math.round(performance.now() - unlocking) });
    const bridgePolicy = flags['bridge-accept-counterparts'] ? await readRegistrationPolicy(flags['bridge-accept-counterparts']) : undefined;
    const slashingDb = await openValidatorDataDir(resolve(flags['data-dir']), genesis);
    const client = new ValidatorClient({
      genesis,
      keys,
      beaconUrl,
      token,
      slashingDb,
      log,
      dataDir: resolve(flags['data-dir']),
      ...(flags['metrics-port'] === 0 ? {} : { metricsPort: flags['metrics-port'], metricsHost: flags['metrics-host'] }),
      ...(bridgePolicy ? { bridgePolicy } : {}),
    });
    try {
      await client.start();
    } catch (err) {
      await slashingDb.close();
      throw err;
    }
    await stopOnSignal(log, () => client.stop().then(() => slashingDb.close()), { logFailure: true });
  }
}
