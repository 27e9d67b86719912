import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand } from '../../cli/base.js';
import { readPassword } from '../../cli/secrets.js';
import { DEFAULT_ACCOUNTS, DEFAULT_VALIDATORS, DEVNET_KDF_MEMORY_KIB } from '../../devnet/lifecycle.js';
import { DEFAULT_IMAGE, EXPORT_FORMATS, type ExportFormat } from '../../devnet/export/model.js';
import { type ExportResult, exportNetwork } from '../../devnet/export/write.js';
import type { ValidatorProcesses } from '../../devnet/manifest.js';
import { VALIDATOR_PROCESS_MODES } from '../../devnet/plan.js';
import { PRESETS } from '../../core/genesis/genesis.js';

export default class DevnetExport extends SvcCommand {
  static override summary = 'Write the devnet as a Docker Compose file or Kubernetes manifests: same genesis, nodes, validators and bootnodes as devnet up';
  static override description = [
    'Builds the devnet genesis now (fixed --genesis-time, the public dev mnemonic), so every node\'s libp2p peer id is known and named in the bootnode lists (/dns4/<service>/tcp/9000/p2p/<id>). In the cluster a genesis step (a Compose service that completes, or a Kubernetes Job) writes that same genesis, the keystores and the P2P keys to a shared volume; producing nodes, followers and their validator clients (one per producing node holding its keys, or with --validator-processes per-validator one per validator) then start from it, each with a persistent volume, followed by Prometheus (the shipped alert rules) and Grafana (the shipped dashboard).',
    'Keystore password, validator bearer token and engine JWT secret are files under DIR/secrets/ (created when absent, kept when present), mounted as Compose secrets or a Kubernetes Secret: never in a command line or environment value.',
    'compose: DIR/compose.yaml (run: docker compose -f DIR/compose.yaml up -d). k8s: DIR/manifests/*.json (run: kubectl apply -f DIR/manifests). See docs/deploy.md.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> devnet export --format compose --validators 4 --nodes 2 --followers 1 --out ./net',
    '<%= config.bin %> devnet export --format k8s --validators 4 --nodes 2 --out ./net-k8s --image registry.example/svc:0.1.0',
  ];
  static override flags = {
    format: Flags.string({ description: 'what to write', options: [...EXPORT_FORMATS], required: true }),
    validators: Flags.integer({ description: `number of validators (default ${DEFAULT_VALIDATORS})` }),
    'validator-processes': Flags.string({ description: 'per-node: one validator client per producing node holding its keys; per-validator: one client (Compose service, Kubernetes pod) per validator', options: [...VALIDATOR_PROCESS_MODES], default: 'per-node' }),
    nodes: Flags.integer({ description: 'producing nodes; validators spread round-robin (validator i on node i mod K); default 1' }),
    followers: Flags.integer({ description: 'read-only nodes; default 0' }),
    accounts: Flags.integer({ description: `prefunded accounts (default ${DEFAULT_ACCOUNTS})` }),
    'slot-time': Flags.integer({ description: `seconds per slot (default ${PRESETS.devnet.slot_seconds})`, min: 1, max: 3600 }),
    'slots-per-epoch': Flags.integer({ description: `slots per epoch (default ${PRESETS.devnet.slots_per_epoch})`, min: 1, max: 1024 }),
    'genesis-time': Flags.integer({ description: 'Unix seconds of slot 0 (default: now); the peer ids derive from the genesis, so it is fixed here' }),
    image: Flags.string({ description: 'svc container image the services run (built from the repository Dockerfile)', default: DEFAULT_IMAGE }),
    out: Flags.string({ description: 'output directory (files in it are replaced; secrets/ is kept)', required: true }),
    'password-file': Flags.string({ description: 'keystore password for the new secrets/keystore-password (default: the public devnet password)' }),
    'kdf-memory': Flags.integer({ description: `Argon2id memory in KiB of the keystores the genesis step writes (default ${DEVNET_KDF_MEMORY_KIB}: the keys and password are public)`, min: 64, max: 4 * 1024 * 1024, helpGroup: 'ADVANCED' }),
  };

  async run(): Promise<ExportResult> {
    const { flags } = await this.parse(DevnetExport);
    const password = flags['password-file'] ? await readPassword(flags['password-file']) : undefined;
    const r = await exportNetwork({
      format: flags.format as ExportFormat,
      out: resolve(flags.out),
      validators: flags.validators ?? DEFAULT_VALIDATORS,
      producers: flags.nodes ?? 1,
      followers: flags.followers ?? 0,
      accounts: flags.accounts ?? DEFAULT_ACCOUNTS,
      ...(flags['slot-time'] !== undefined ? { slotSeconds: flags['slot-time'] } : {}),
      ...(flags['slots-per-epoch'] !== undefined ? { slotsPerEpoch: flags['slots-per-epoch'] } : {}),
      genesisTime: flags['genesis-time'] ?? Math.floor(Date.now() / 1000),
      image: flags.image,
      kdfMemoryKib: flags['kdf-memory'] ?? DEVNET_KDF_MEMORY_KIB,
      validatorProcesses: flags['validator-processes'] as ValidatorProcesses,
      ...(password !== undefined ? { password } : {}),
    });
    this.say(`Wrote ${r.files.length} files (${r.format}) to ${r.out}`);
    this.say(`Genesis hash ${r.genesis_hash}, genesis time ${new Date(r.genesis_time * 1000).toISOString()}`);
    for (const n of r.nodes) this.say(`  node ${n.index} ${n.role.padEnd(8)} beacon ${n.peer_ids.beacon}  execution ${n.peer_ids.execution}${n.validators.length ? `  validators ${n.validators.join(',')}` : ''}`);
    if (r.secrets_created.length > 0) this.say(`Created secrets: ${r.secrets_created.map((s) => `secrets/${s}`).join(', ')}`);
    this.say(r.format === 'compose' ? `Run: docker compose -f ${r.out}/compose.yaml up -d` : `Run: kubectl apply -f ${r.out}/manifests`);
    return r;
  }
}
