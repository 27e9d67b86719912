import { Args } from '@oclif/core';
import { ContractTxCommand, contractTxFlags } from '../../cli/contract-flags.js';
import { deployContract, parseArgs, readWasm } from '../../client/contract.js';

export default class ContractDeploy extends ContractTxCommand {
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
    const done = await this.sendAndFollow(flags, (settings) => deployContract(settings, code, values));
    return done.receipt ? { ...done, contract_address: done.receipt.contractAddress } : done;
  }
}
