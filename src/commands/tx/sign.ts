import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { readPassword } from '../../cli/secrets.js';
import { valueTxFlags, valueTxInput } from '../../cli/tx-flags.js';
import { buildValueTx, resolveSigningWallet, signValueTx } from '../../wallet/tx-builder.js';
import { unlockWallet } from '../../wallet/keystore.js';
import { chainIdBytes } from '../../core/crypto/domain.js';
import { txToJson } from '../../core/types/transaction-json.js';

export default class TxSign extends SvcCommand {
  static override summary = 'Sign a transaction offline and print its hash, raw envelope and JSON form';
  static override description =
    'Nothing is sent (see `tx send`). Values are base-10 wei strings. The chain id is part of the signed message: a transaction signed for another chain is rejected as "invalid transaction signature".';
  static override examples = [
    '<%= config.bin %> tx sign --from alice --to 0x00000000000000000000000000000000000000aa --value 1000000000000000000 --nonce 0 --chain-id svc-devnet',
    '<%= config.bin %> tx sign --from alice --deploy --data 0x0061736d01000000 --nonce 1 --gas-limit 100000 --chain-id svc-devnet --json',
  ];
  static override flags = {
    ...valueTxFlags({ valueRequired: false }),
    nonce: Flags.string({ description: 'sender nonce', required: true }),
    'chain-id': Flags.string({ description: 'chain id the signature is bound to', required: true }),
  };

  async run() {
    const { flags } = await this.parse(TxSign);
    chainIdBytes(flags['chain-id']); // reject a bad chain id before asking for a password
    const fields = buildValueTx(valueTxInput(flags, flags.nonce));
    const stored = await resolveSigningWallet(flags.from);
    const keys = await unlockWallet(stored.wallet.file, await readPassword(flags['password-file']));
    const { tx, hash, raw } = signValueTx(fields, keys.mldsa, flags['chain-id']);
    this.say(`Hash: ${hash}`);
    this.say(`From: ${keys.address}`);
    this.say(`Size: ${(raw.length - 2) / 2} bytes`);
    this.say(`Raw:  ${raw}`);
    return { hash, raw, chain_id: flags['chain-id'], tx: txToJson(tx) };
  }
}
