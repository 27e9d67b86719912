import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { kdfMemory, kdfMemoryFlag, passwordFileFlag } from '../../cli/flags.js';
import { readPassword } from '../../cli/secrets.js';
import { Branch, newMnemonic, walletPath } from '../../wallet/derivation.js';
import { newWalletFile } from '../../wallet/keystore.js';
import { saveWallet, walletFilePath } from '../../wallet/store.js';
import { assertAbsent } from '../../util/fs.js';

export default class WalletNew extends SvcCommand {
  static override summary = 'Create a wallet: new 24-word mnemonic, ML-DSA-65 and secp256k1 keys, encrypted file';
  static override description =
    'The mnemonic is printed once and never stored: write it down, it is the only way to recover the wallet. The file in $SVC_HOME/wallets holds the seed encrypted with Argon2id + AES-256-GCM.';
  static override examples = ['<%= config.bin %> wallet new --name alice', 'SVC_PASSWORD=... <%= config.bin %> wallet new --json'];
  static override flags = {
    name: Flags.string({ description: 'wallet name (file name in $SVC_HOME/wallets); default: the address' }),
    index: Flags.integer({ description: 'address index in the derivation path', default: 0, min: 0, max: 0x7fffffff }),
    force: Flags.boolean({ description: 'overwrite an existing wallet file of the same name' }),
    'password-file': passwordFileFlag,
    'kdf-memory': kdfMemoryFlag,
  };

  async run() {
    const { flags } = await this.parse(WalletNew);
    // Fail on a bad or taken name before the password prompt and the Argon2 run.
    if (flags.name !== undefined && !flags.force) assertAbsent([walletFilePath(flags.name)]);
    const password = await readPassword(flags['password-file'], { confirm: true, prompt: 'New wallet password: ' });
    const mnemonic = newMnemonic();
    const { file } = await newWalletFile(mnemonic, walletPath(Branch.Accounts, flags.index), password, kdfMemory(flags['kdf-memory']));
    const name = flags.name ?? file.address;
    const path = await saveWallet(name, file, { force: flags.force });
    this.say(`Address:         ${file.address}`);
    this.say(`ECDSA address:   ${file.ecdsa_address}`);
    this.say(`Derivation path: ${file.derivation_path}`);
    this.say(`Wallet file:     ${path}`);
    this.say('');
    this.say('Recovery mnemonic (shown once, never stored; anyone with it controls the wallet):');
    this.say(`  ${mnemonic}`);
    return { name, path, address: file.address, ecdsa_address: file.ecdsa_address, derivation_path: file.derivation_path, mnemonic };
  }
}
