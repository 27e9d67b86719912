import { Args } from '@oclif/core';
import { SvcCommand } from '../../cli/base.js';
import { contractReceiptLines, contractTxFlags, sentLines } from '../../cli/contract-flags.js';
import { readPassword } from '../../cli/secrets.js';
import { deployContract, parseArgs, readWasm, receiptFailure, waitForReceipt } from '../../client/contract.js';
import { ExecutionClient, resolveExecutionUrl } from '../../client/execution.js';

export default class ContractDeploy extends SvcCommand {
  static override summary = 'Deploy a compiled WebAssembly contract; arguments after the file go to its init';
  static override description =
    'Arguments are typed by shape (0x+40 hex: address, digits: u256, true/false: bool, other 0x: bytes, else string) or explicitly as type:value ' +
    '(u64:5, u256:…, address:…, bytes32:…, bytes:0x…, string:…, bool:true). The gas limit defaults to the node\'s estimate. ' +
    'With --wait, prints the receipt with the contract address; exits 1 if the deployment failed (status 0), with the reason and the gas charged.';
  static override examples = [
    '<%= config.bin %> contract deploy build/token.wasm string:Token string:TOK 1000000 --from alice --wait',
    '<%= config.bin %> contract deploy counter.wasm --from alice --json',
  ];
  static override strict = false;
  static override args = { file: Args.string({ description: 'compiled contract (.wasm)', required: true }) };
  static override flags = contractTxFlags;

  async run() {
    const { args, argv, flags } = await this.parse(ContractDeploy);
    const values = parseArgs((argv as string[]).slice(1));
    const code = await readWasm(args.file);
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const settings = { client, from: flags.from, value: flags.value, gasPrice: flags['gas-price'], gasLimit: flags['gas-limit'], nonce: flags.nonce, chainId: flags['chain-id'], password: () => readPassword(flags['password-file']), warn: (l: string) => this.note(l) };
    const sent = await deployContract(settings, code, values);
    for (const line of sentLines(sent)) this.say(line);
    if (!flags.wait) return sent;
    if (!this.jsonEnabled()) this.note(`Waiting up to ${flags.timeout} s for a block…`);
    const done = await waitForReceipt(client, sent, flags.timeout * 1000);
    for (const line of contractReceiptLines(done.receipt, done.state)) this.say(line);
    const failed = receiptFailure(done.receipt);
    if (failed) throw failed;
    return { ...done, contract_address: done.receipt.contractAddress };
  }
}
