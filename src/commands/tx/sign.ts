import { Flags } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { passwordFileFlag } from '../../cli/flags.js';
import { readPassword } from '../../cli/secrets.js';
import { SvcError, WalletError } from '../../core/errors.js';
import { buildValueTx } from '../../wallet/tx-builder.js';
import { unlockWallet } from '../../wallet/keystore.js';
import { resolveWallet } from '../../wallet/store.js';
import { toHex } from '../../core/codec/bytes.js';
import { chainIdBytes } from '../../core/crypto/domain.js';
import { encodeTx, signStandardTx, txHash } from '../../core/types/transaction.js';
import { txToJson } from '../../core/types/transaction-json.js';

export default class TxSign extends SvcCommand {
  static override summary = 'Sign a transaction offline and print its hash, raw envelope and JSON form';
  static override description =
    'Nothing is sent. Values are base-10 wei strings. The chain id is part of the signed message: a transaction signed for another chain is rejected as "invalid transaction signature".';
  static override examples = [
    '<%= config.bin %> tx sign --from alice --to 0x00000000000000000000000000000000000000aa --value 1000000000000000000 --nonce 0 --chain-id svc-devnet',
    '<%= config.bin %> tx sign --from alice --deploy --data 0x0061736d01000000 --nonce 1 --gas-limit 100000 --chain-id svc-devnet --json',
  ];
  static override flags = {
    from: Flags.string({ description: 'signing wallet: name, address or file path', required: true }),
    to: Flags.string({ description: 'recipient 0x address', exactlyOne: ['to', 'deploy'] }),
    deploy: Flags.boolean({ description: 'contract deployment (no recipient; --data is the code)' }),
    value: Flags.string({ description: 'amount in wei (base-10)', default: '0' }),
    nonce: Flags.string({ description: 'sender nonce', required: true }),
    'gas-price': Flags.string({ description: 'gas price in wei (base-10)', default: '1000000000' }),
    'gas-limit': Flags.string({ description: 'gas limit (default: the intrinsic gas of the transaction)' }),
    data: Flags.string({ description: 'call data or contract code, 0x hex', default: '0x' }),
    'chain-id': Flags.string({ description: 'chain id the signature is bound to', required: true }),
    'password-file': passwordFileFlag,
  };

  async run() {
    const { flags } = await this.parse(TxSign);
    chainIdBytes(flags['chain-id']); // reject a bad chain id before asking for a password
    const fields = buildValueTx({
      to: flags.deploy ? null : flags.to!,
      value: flags.value,
      nonce: flags.nonce,
      gasPrice: flags['gas-price'],
      gasLimit: flags['gas-limit'],
      data: flags.data,
    });
    const stored = await resolveWallet(flags.from);
    if (stored.wallet.kind !== 'v2') throw new WalletError('WATCH_ONLY', `wallet ${stored.name} is a watch-only (legacy) wallet and cannot sign`);
    const keys = await unlockWallet(stored.wallet.file, await readPassword(flags['password-file']));
    let tx;
    try {
      tx = signStandardTx(fields, keys.mldsa, flags['chain-id']);
    } catch (err) {
      throw err instanceof SvcError ? err : new SvcError('SIGN_FAILED', (err as Error).message);
    }
    const hash = toHex(txHash(tx));
    const raw = toHex(encodeTx(tx));
    this.say(`Hash: ${hash}`);
    this.say(`From: ${keys.address}`);
    this.say(`Size: ${(raw.length - 2) / 2} bytes`);
    this.say(`Raw:  ${raw}`);
    return { hash, raw, chain_id: flags['chain-id'], tx: txToJson(tx) };
  }
}
