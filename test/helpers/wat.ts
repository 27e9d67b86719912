/** WebAssembly text to binary for VM tests (not a test file itself), through binaryen (assemblyscript's dependency). */
import binaryen from 'binaryen';
import { concatBytes } from '../../src/core/codec/bytes.js';

/** Assembles a module written in WebAssembly text; throws if binaryen refuses it. */
export function wat(text: string): Uint8Array {
  const m = binaryen.parseText(text);
  try {
    m.setFeatures(binaryen.Features.MVP | binaryen.Features.BulkMemory | binaryen.Features.BulkMemoryOpt | binaryen.Features.SignExt | binaryen.Features.MutableGlobals | binaryen.Features.Multivalue);
    if (!m.validate()) throw new Error('binaryen: the module does not validate');
    return m.emitBinary();
  } finally {
    m.dispose();
  }
}

/** Deploy data: u32 LE code length ‖ code ‖ constructor args. */
export function deployData(code: Uint8Array, args: Uint8Array = new Uint8Array(0)): Uint8Array {
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, code.length, true);
  return concatBytes(len, code, args);
}

/** Call data: u8 method length ‖ method ‖ raw args. */
export function callData(method: string, args: Uint8Array = new Uint8Array(0)): Uint8Array {
  return concatBytes(Uint8Array.of(method.length), new TextEncoder().encode(method), args);
}

/** Every host import of the ABI, for test modules to paste in. */
export const HOST_IMPORTS = `
  (import "svc" "input_size" (func $input_size (result i32)))
  (import "svc" "input_copy" (func $input_copy (param i32)))
  (import "svc" "storage_read" (func $storage_read (param i32 i32) (result i32)))
  (import "svc" "storage_write" (func $storage_write (param i32 i32)))
  (import "svc" "storage_remove" (func $storage_remove (param i32)))
  (import "svc" "caller" (func $caller (param i32)))
  (import "svc" "self_address" (func $self_address (param i32)))
  (import "svc" "call_value" (func $call_value (param i32)))
  (import "svc" "block_number" (func $block_number (result i64)))
  (import "svc" "block_timestamp" (func $block_timestamp (result i64)))
  (import "svc" "balance" (func $balance (param i32 i32)))
  (import "svc" "transfer" (func $transfer (param i32 i32) (result i32)))
  (import "svc" "call" (func $call (param i32 i32 i32 i32 i64) (result i32)))
  (import "svc" "return_data_size" (func $return_data_size (result i32)))
  (import "svc" "return_data_copy" (func $return_data_copy (param i32)))
  (import "svc" "emit_log" (func $emit_log (param i32 i32 i32 i32)))
  (import "svc" "set_return" (func $set_return (param i32 i32)))
  (import "svc" "revert" (func $revert (param i32 i32)))
  (import "svc" "sha3" (func $sha3 (param i32 i32 i32)))
  (import "svc" "mldsa_verify" (func $mldsa_verify (param i32 i32 i32 i32) (result i32)))
  (import "svc" "gas_left" (func $gas_left (result i64)))
`;
