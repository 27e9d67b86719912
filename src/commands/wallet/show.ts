import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { readPassword } from '../../cli/secrets.js';
import { toHex, parseBase64 } from '../../core/codec/bytes.js';
import { unlockWallet } from '../../wallet/keystore.js';
import { resolveWallet } from '../../wallet/store.js';
import { summarizeWallet } from '../../wallet/summary.js';

export default class WalletShow extends SvcCommand {
  static override summary = 'Show a wallet (name, address or file path); --unlock also checks the password and prints the public key';
  static override examples = ['<%= config.bin %> wallet show alice', '<%= config.bin %> wallet show 0x1234... --unlock --json'];
  static override args = { wallet: Args.string({ description: 'wallet name, address or file path', required: true }) };
  static override flags = {
    unlock: Flags.boolean({ description: 'decrypt the wallet to verify the password and show the ML-DSA-65 public key' }),
    'password-file': passwordFileFlag,
  };

  async run() {
    const { args, flags } = await this.parse(WalletShow);
    const stored = await resolveWallet(args.wallet);
    const summary = summarizeWallet(stored);
    let publicKey: string | null = null;
    if (stored.wallet.kind === 'legacy') {
      publicKey = toHex(parseBase64(stored.wallet.file.public_key, 'public_key'));
      if (flags.unlock) this.note('note: watch-only wallet: no key material to unlock');
    } else if (flags.unlock) {
      const keys = await unlockWallet(stored.wallet.file, await readPassword(flags['password-file']));
      publicKey = toHex(keys.mldsa.publicKey);
    }
    this.say(`Name:            ${summary.name}`);
    this.say(`File:            ${summary.path}`);
    this.say(`Version:         ${summary.version}${summary.watch_only ? ' (watch-only: no key material, cannot sign)' : ''}`);
    this.say(`Address:         ${summary.address}`);
    if (summary.ecdsa_address) this.say(`ECDSA address:   ${summary.ecdsa_address}`);
    if (summary.derivation_path) this.say(`Derivation path: ${summary.derivation_path}`);
    if (summary.created_at) this.say(`Created:         ${summary.created_at}`);
    if (publicKey) this.say(`Public key:      ${publicKey.slice(0, 66)}… (${(publicKey.length - 2) / 2} bytes)`);
    return { ...summary, public_key: publicKey };
  }
}
