import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { SvcCommand, UsageError } from '../../cli/base.js';
import { parseTokens } from '../../cli/bridge-flags.js';
import { formatAmount } from '../../cli/format.js';
import { kdfMemory, kdfMemoryFlag, passwordFileFlag } from '../../cli/flags.js';
import { readPassword, readSecret } from '../../cli/secrets.js';
import { toHex } from '../../core/codec/bytes.js';
import { BRIDGE_ADDRESS, WEI_PER_TOKEN } from '../../core/constants.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { buildGenesis, DEVNET_PASSWORD, MAX_GENESIS_VALIDATORS, plannedGenesisFiles, writeGenesis } from '../../genesis/build.js';
import { assertAbsent } from '../../util/fs.js';
import { DEV_MNEMONIC, newMnemonic } from '../../wallet/derivation.js';

const DEFAULTS = {
  devnet: { chainId: 'svc-devnet', networkId: 1337, accounts: 10 },
  mainnet: { chainId: 'svc-mainnet', networkId: 7000, accounts: 0 },
} as const;

export default class GenesisNew extends SvcCommand {
  static override summary = 'Write a genesis document plus one encrypted keystore per validator, account and the faucet';
  static override description = [
    'devnet preset: keys come from the public dev mnemonic (printed, like anvil) and keystores use the password "svc-devnet" unless --password-file is given (SVC_PASSWORD, usually set for your own wallets, is not used here, so nodes started on this genesis find the same default).',
    'mainnet preset: a fresh random mnemonic is generated (printed once) unless --mnemonic-file is given, and a password is required.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> genesis new --validators 4 --out ./net',
    '<%= config.bin %> genesis new --validators 16 --preset mainnet --out ./net --password-file pw.txt --json',
    '<%= config.bin %> genesis new --validators 4 --chain-id svc-c --bridge-reserve 1000000 --bridge-counterpart ./b/genesis/genesis.json=100000 --out ./c',
  ];
  static override flags = {
    validators: Flags.integer({ description: 'number of genesis validators', required: true, min: 1, max: MAX_GENESIS_VALIDATORS }),
    preset: Flags.string({ description: 'timing preset', options: ['devnet', 'mainnet'], default: 'devnet' }),
    out: Flags.string({ description: 'output directory', default: '.' }),
    'chain-id': Flags.string({ description: 'chain id (at most 12 bytes); default svc-devnet or svc-mainnet' }),
    'network-id': Flags.integer({ description: 'numeric id for Ethereum tooling; default 1337 (devnet) or 7000', min: 1 }),
    accounts: Flags.integer({ description: 'prefunded accounts; default 10 (devnet) or 0', min: 0, max: 1000 }),
    'genesis-time': Flags.integer({ description: 'Unix seconds of slot 0; default now', min: 0 }),
    'randao-chain-length': Flags.integer({ description: "reveals per validator RANDAO hash chain (default: the preset's, 2^16 devnet, 2^20 mainnet); short chains exercise re-commitment", min: 1, max: 1 << 24 }),
    'bridge-reserve': Flags.integer({ description: 'tokens allocated to the bridge account (0x…1003), the liquidity releases pay from (docs/bridge.md); default 0', min: 0, default: 0 }),
    'bridge-counterpart': Flags.string({
      description:
        "a chain this one trusts as a bridge counterpart from genesis (docs/bridge.md \"Genesis counterparts\"): its genesis.json, and after = the tokens of the bridge reserve that are its ledger (default 0: lock-only). Repeatable; refused when the allowances exceed --bridge-reserve",
      multiple: true,
      helpValue: 'FILE[=TOKENS]',
    }),
    'mnemonic-file': Flags.string({ description: 'derive every key from the mnemonic in this file' }),
    force: Flags.boolean({ description: 'overwrite existing files' }),
    'password-file': passwordFileFlag,
    'kdf-memory': kdfMemoryFlag,
  };

  async run() {
    const { flags } = await this.parse(GenesisNew);
    const preset = flags.preset as 'devnet' | 'mainnet';
    const defaults = DEFAULTS[preset];
    const mnemonic = flags['mnemonic-file']
      ? await readSecret({ file: flags['mnemonic-file'], envVar: 'SVC_MNEMONIC', prompt: '', what: 'mnemonic', fileFlag: '--mnemonic-file' })
      : preset === 'devnet'
        ? DEV_MNEMONIC
        : newMnemonic();
    // Read before any key is derived: a wrong file or amount costs nothing.
    const counterparts = await Promise.all((flags['bridge-counterpart'] ?? []).map(readCounterpartFlag));
    const out = resolve(flags.out);
    const accounts = flags.accounts ?? defaults.accounts;
    // Refuse before deriving keys, building RANDAO chains and asking for a password.
    if (!flags.force) assertAbsent(plannedGenesisFiles(out, flags.validators, accounts));
    const built = buildGenesis({
      validators: flags.validators,
      accounts,
      preset,
      chainId: flags['chain-id'] ?? defaults.chainId,
      networkId: flags['network-id'] ?? defaults.networkId,
      genesisTime: flags['genesis-time'] ?? Math.floor(Date.now() / 1000),
      mnemonic,
      ...(flags['randao-chain-length'] !== undefined ? { timing: { randaoChainLength: flags['randao-chain-length'] } } : {}),
      bridgeReserve: BigInt(flags['bridge-reserve']) * WEI_PER_TOKEN,
      bridgeCounterparts: counterparts,
    });
    const devPassword = preset === 'devnet' && !flags['password-file'];
    const password = devPassword ? DEVNET_PASSWORD : await readPassword(flags['password-file'], { confirm: true, prompt: 'Keystore password: ' });
    const files = await writeGenesis(out, built, mnemonic, password, { force: flags.force, kdfMemoryKib: kdfMemory(flags['kdf-memory']) });
    const g = built.genesis;
    const hash = toHex(genesisHash(g));
    const balanceOf = (address: string) => g.alloc.find((a) => a.address === address)?.balance ?? '0';
    const keystores = files.keystores.map((k) => ({ ...k, balance: balanceOf(k.address) }));

    this.say(`Genesis:        ${files.genesis}`);
    this.say(`Genesis hash:   ${hash}`);
    this.say(`Chain id:       ${g.chain_id} (network id ${g.network_id}), preset ${g.preset}: ${g.config.slot_seconds}s slots, ${g.config.slots_per_epoch}-slot epochs`);
    this.say(`Genesis time:   ${new Date(g.genesis_time * 1000).toISOString()}`);
    if (flags['bridge-reserve'] > 0) this.say(`Bridge reserve: ${flags['bridge-reserve']} tokens at ${BRIDGE_ADDRESS}`);
    const listed = (g.bridge_counterparts ?? []).map((c) => ({ chain_id: c.genesis.chain_id, genesis_hash: c.genesis_hash, allowance: c.allowance }));
    for (const c of listed) this.say(`Counterpart:    ${c.chain_id} (${c.genesis_hash}), ledger ${formatAmount(c.allowance)}`);
    this.say('');
    for (const role of ['validator', 'account', 'faucet'] as const) {
      const rows = keystores.filter((k) => k.role === role);
      if (rows.length === 0) continue;
      this.say(role === 'validator' ? 'Validators' : role === 'account' ? 'Prefunded accounts' : 'Faucet');
      for (const k of rows) this.say(`  (${k.index}) ${k.address}  ${k.path}`);
    }
    this.say('');
    this.say(`Mnemonic:       ${mnemonic}`);
    if (mnemonic === DEV_MNEMONIC) this.say('                (the public dev mnemonic: never use these keys on a real network)');
    if (devPassword) this.say(`Keystore password: ${DEVNET_PASSWORD}`);
    return {
      genesis: files.genesis,
      genesis_hash: hash,
      chain_id: g.chain_id,
      network_id: g.network_id,
      preset: g.preset,
      genesis_time: g.genesis_time,
      bridge_reserve: balanceOf(BRIDGE_ADDRESS),
      bridge_counterparts: listed,
      mnemonic,
      keystore_password: devPassword ? DEVNET_PASSWORD : null,
      keystores,
    };
  }
}

/** A --bridge-counterpart value: FILE (its genesis document) and optionally =TOKENS (its allowance; a file name cannot hold "="). */
async function readCounterpartFlag(value: string): Promise<{ genesis: Genesis; allowance: bigint }> {
  const at = value.lastIndexOf('=');
  const file = at < 0 ? value : value.slice(0, at);
  if (file === '') throw new UsageError(`--bridge-counterpart takes FILE[=TOKENS], got ${JSON.stringify(value)}`);
  const allowance = at < 0 ? 0n : parseTokens(value.slice(at + 1), `--bridge-counterpart ${file}=TOKENS`);
  return { genesis: await loadGenesisFile(resolve(file)), allowance };
}
