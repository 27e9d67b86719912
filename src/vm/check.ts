/**
 * The VM's deployment check on its own, for callers that check modules but never run them (the
 * contract compiler, src/contract/compile.ts): the same check admission and execution make, the
 * entry points, the memory limit and the refusal codes. A public module beside index.ts because it
 * loads none of the runtime (the ML-DSA verifier, the transaction codec): `svc contract build`
 * starts about half a second sooner than through index.ts, which re-exports all of this.
 */
export { CONTRACT_ERROR_CODES, type ContractErrorCode, ContractModuleError } from './errors.js';
export { type PreparedModule, prepareModule } from './prepare.js';
export { MAX_MEMORY_PAGES } from './schedule.js';
export { type EntryPoints, entryPoints } from './validate.js';
