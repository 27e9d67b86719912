/**
 * What deployment does to a module, in order: the static rules (validate.ts), then the metering
 * rewrite (instrument.ts). Kept apart from both so that the rewrite, which takes a validated
 * module, and the rules do not import each other.
 */
import { ContractModuleError, InstrumentationError } from './errors.js';
import { instrument } from './instrument.js';
import { validateModule } from './validate.js';
import type { WasmModule } from './wasm.js';

/** A module that deployment accepts: its decoded form and the stored (metered) form. */
export interface PreparedModule {
  module: WasmModule;
  stored: Uint8Array;
}

/**
 * Everything deployment checks, in the order it does: the static rules, then the rewrite. A module
 * the rewrite cannot handle is refused like any other bad module (deterministic on every node,
 * never a failed block import). `svc contract build` runs this same function on its output.
 */
export function prepareModule(code: Uint8Array): PreparedModule {
  const validated = validateModule(code);
  try {
    return { module: validated.module, stored: instrument(validated) };
  } catch (err) {
    if (err instanceof InstrumentationError) throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `the VM cannot meter this module: ${err.message}`);
    throw err;
  }
}
