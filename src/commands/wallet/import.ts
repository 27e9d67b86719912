import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { kdfMemory, kdfMemoryFlag, passwordFileFlag } from '../../cli/flags.js';
import { readPassword, readSecret } from '../../cli/secrets.js';
import { Branch, mnemonicToSeed, walletPath } from '../../wallet/derivation.js';
import { newWalletFile } from '../../wallet/keystore.js';
import { saveWallet, walletFilePath } from '../../wallet/store.js';
import { assertAbsent } from '../../util/fs.js';

export default class WalletImport extends SvcCommand {
  static override summary = 'Recreate a wallet from its 24-word mnemonic';
  static override description = 'The mnemonic is read from --mnemonic-file, SVC_MNEMONIC, or a hidden prompt (never from a flag value, which would land in shell history).';
  static override examples = ['<%= config.bin %> wallet import --name alice', '<%= config.bin %> wallet import --mnemonic-file words.txt --index 1'];
  static override flags = {
    name: Flags.string({ description: 'wallet name; default: the address' }),
    index: Flags.integer({ description: 'address index in the default path', default: 0, min: 0, max: 0x7fffffff, exclusive: ['path'] }),
    path: Flags.string({ description: "full derivation path, every level hardened (e.g. m/44'/1'/0'/0'/3')" }),
    'mnemonic-file': Flags.string({ description: 'read the mnemonic from this file (else SVC_MNEMONIC, else a hidden prompt)' }),
    force: Flags.boolean({ description: 'overwrite an existing wallet file of the same name' }),
    'password-file': passwordFileFlag,
    'kdf-memory': kdfMemoryFlag,
  };

  async run() {
    const { flags } = await this.parse(WalletImport);
    // Fail on a bad or taken name before the password prompt and the Argon2 run.
    if (flags.name !== undefined && !flags.force) assertAbsent([walletFilePath(flags.name)]);
    const mnemonic = await readSecret({
      file: flags['mnemonic-file'],
      envVar: 'SVC_MNEMONIC',
      prompt: 'Mnemonic (24 words): ',
      what: 'mnemonic',
      fileFlag: '--mnemonic-file',
    });
    mnemonicToSeed(mnemonic); // fail on a bad mnemonic before asking for a password
    const password = await readPassword(flags['password-file'], { confirm: true, prompt: 'New wallet password: ' });
    const path = flags.path ?? walletPath(Branch.Accounts, flags.index);
    const { file } = await newWalletFile(mnemonic, path, password, kdfMemory(flags['kdf-memory']));
    const name = flags.name ?? file.address;
    const saved = await saveWallet(name, file, { force: flags.force });
    this.say(`Address:         ${file.address}`);
    this.say(`ECDSA address:   ${file.ecdsa_address}`);
    this.say(`Derivation path: ${file.derivation_path}`);
    this.say(`Wallet file:     ${saved}`);
    return { name, path: saved, address: file.address, ecdsa_address: file.ecdsa_address, derivation_path: file.derivation_path };
  }
}
