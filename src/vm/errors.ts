/** Typed errors of the contract VM: why a module was refused at deployment. */
import { SvcError } from '../core/errors.js';

/** Machine codes of a refused deployment; clients branch on these, never on the message. */
export const CONTRACT_ERROR_CODES = [
  'CONTRACT_DEPLOY_DATA_MALFORMED',
  'CONTRACT_MODULE_MALFORMED',
  'CONTRACT_MODULE_TOO_LARGE',
  'CONTRACT_FORBIDDEN_IMPORT',
  'CONTRACT_FLOAT',
  'CONTRACT_UNSUPPORTED_FEATURE',
  'CONTRACT_MEMORY',
  'CONTRACT_LIMIT',
  'CONTRACT_RESERVED_EXPORT',
] as const;
export type ContractErrorCode = (typeof CONTRACT_ERROR_CODES)[number];

/** A deployment whose data or module breaks a static rule of docs/contracts.md (HTTP 400). */
export class ContractModuleError extends SvcError {
  constructor(code: ContractErrorCode, message: string) {
    super(code, message, 400);
  }
}

/** The VM's own rewrite produced a module the engine refuses: a bug here, never the deployer's fault. */
export class InstrumentationError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONTRACT_INSTRUMENTATION_FAILED', message, 500, options);
  }
}
