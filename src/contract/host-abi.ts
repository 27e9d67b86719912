/**
 * The contract host ABI (import module "svc", version 1) as the SDK binds it: every function a
 * contract may import, with its WebAssembly signature. Pointers and lengths are i32, numbers i64.
 * The VM's import allowlist must accept exactly these; `svc contract build` checks a compiled
 * contract against this table so a contract the VM would refuse fails at build time instead.
 */

/** A WebAssembly value type as the ABI uses it. */
export type AbiValType = 'i32' | 'i64';

/** One host function's signature. */
export interface HostFunctionSig {
  params: readonly AbiValType[];
  results: readonly AbiValType[];
}

/** The only import module a contract may use. */
export const HOST_MODULE = 'svc';

/** Each host function by name. */
export const HOST_FUNCTIONS: Readonly<Record<string, HostFunctionSig>> = {
  input_size: { params: [], results: ['i32'] },
  input_copy: { params: ['i32'], results: [] },
  storage_read: { params: ['i32', 'i32'], results: ['i32'] },
  storage_write: { params: ['i32', 'i32'], results: [] },
  storage_remove: { params: ['i32'], results: [] },
  caller: { params: ['i32'], results: [] },
  self_address: { params: ['i32'], results: [] },
  call_value: { params: ['i32'], results: [] },
  block_number: { params: [], results: ['i64'] },
  block_timestamp: { params: [], results: ['i64'] },
  balance: { params: ['i32', 'i32'], results: [] },
  transfer: { params: ['i32', 'i32'], results: ['i32'] },
  call: { params: ['i32', 'i32', 'i32', 'i32', 'i64'], results: ['i32'] },
  return_data_size: { params: [], results: ['i32'] },
  return_data_copy: { params: ['i32'], results: [] },
  emit_log: { params: ['i32', 'i32', 'i32', 'i32'], results: [] },
  set_return: { params: ['i32', 'i32'], results: [] },
  revert: { params: ['i32', 'i32'], results: [] },
  sha3: { params: ['i32', 'i32', 'i32'], results: [] },
  mldsa_verify: { params: ['i32', 'i32', 'i32', 'i32'], results: ['i32'] },
  gas_left: { params: [], results: ['i64'] },
};

/** The export the VM runs once at deployment, with the constructor arguments as input. */
export const INIT_EXPORT = 'init';
