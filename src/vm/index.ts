/**
 * The contract VM's public module (docs/contracts.md): what execution runs (a contract
 * transaction against a StateView, its intrinsic gas, the deployment check at admission) and,
 * from check.ts, what the contract compiler checks its output with. Everything else under src/vm/
 * is the VM's own: callers outside it import this module or check.ts, as ethereumjs keeps its evm
 * a package of its own that the vm and the client import by its entry only.
 */
export * from './check.js';
export { type ContractTxContext, type ContractTxResult, intrinsicGas, moduleCacheStats, runContractTx, validateDeploy } from './executor.js';
export type { Account, StateView } from './state.js';
