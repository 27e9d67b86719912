/** Typed errors of the contract VM: why a module was refused at deployment, or why a run stopped. */
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

/**
 * Every code the VM raises: a refused deployment, a fault of its own rewrite, an exhausted machine
 * resource, and the signals that unwind a frame (never seen outside the VM). Each has its HTTP
 * status in src/api/errors.ts.
 */
export type VmErrorCode = ContractErrorCode | 'CONTRACT_INSTRUMENTATION_FAILED' | 'VM_RESOURCE_EXHAUSTED' | 'VM_OUT_OF_GAS' | 'VM_REVERT' | 'VM_HOST_TRAP';

/** An error the VM raises; `code` is a VmErrorCode. */
export class VmError<C extends VmErrorCode = VmErrorCode> extends SvcError<C> {}

/** A deployment whose data or module breaks a static rule of docs/contracts.md (HTTP 400). */
export class ContractModuleError extends VmError<ContractErrorCode> {
  constructor(code: ContractErrorCode, message: string) {
    super(code, message);
  }
}

/** The VM's own rewrite produced a module the engine refuses: a bug here, never the deployer's fault. */
export class InstrumentationError extends VmError<'CONTRACT_INSTRUMENTATION_FAILED'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONTRACT_INSTRUMENTATION_FAILED', message, options);
  }
}
