/** WebAssembly-text test contracts for the VM tests (not a test file itself). */
import { HOST_IMPORTS, wat } from '../helpers/wat.js';

/** WAT string literal of raw bytes. */
export function watBytes(bytes: Uint8Array): string {
  return [...bytes].map((b) => '\\' + b.toString(16).padStart(2, '0')).join('');
}

/** The 32-byte topic the counter's `increment` logs. */
export const COUNTER_TOPIC = new Uint8Array(32).fill(0xc0);
/** What `fail` writes before it reverts (so the revert has something to undo). */
export const FAIL_VALUE = new Uint8Array(32).fill(0xee);
export const REVERT_REASON = 'counter says no';

/**
 * Counter and context contract. Slot 0 holds a little-endian u64 in its first 8 bytes.
 * Memory: 0..32 slot key 0, 32..64 value, 64..96 topic, 128.. reason, 160..192 FAIL_VALUE.
 */
export const COUNTER = wat(`(module ${HOST_IMPORTS}
  (memory (export "memory") 1)
  (data (i32.const 64) "${watBytes(COUNTER_TOPIC)}")
  (data (i32.const 128) "${REVERT_REASON}")
  (data (i32.const 160) "${watBytes(FAIL_VALUE)}")
  (func (export "init")
    (call $input_copy (i32.const 32))
    (call $storage_write (i32.const 0) (i32.const 32)))
  (func (export "increment")
    (drop (call $storage_read (i32.const 0) (i32.const 32)))
    (i64.store (i32.const 32) (i64.add (i64.load (i32.const 32)) (i64.const 1)))
    (call $storage_write (i32.const 0) (i32.const 32))
    (call $emit_log (i32.const 64) (i32.const 1) (i32.const 32) (i32.const 8)))
  (func (export "get")
    (i32.store (i32.const 100) (call $storage_read (i32.const 0) (i32.const 32)))
    (call $set_return (i32.const 32) (i32.const 8)))
  (func (export "is_set")
    (i32.store (i32.const 100) (call $storage_read (i32.const 0) (i32.const 32)))
    (call $set_return (i32.const 100) (i32.const 1)))
  (func (export "clear")
    (call $storage_remove (i32.const 0)))
  (func (export "context")
    (call $caller (i32.const 256))
    (call $self_address (i32.const 276))
    (call $call_value (i32.const 296))
    (i64.store (i32.const 328) (call $block_number))
    (i64.store (i32.const 336) (call $block_timestamp))
    (call $input_copy (i32.const 344))
    (call $set_return (i32.const 256) (i32.add (i32.const 88) (call $input_size))))
  (func (export "fail")
    (call $storage_write (i32.const 0) (i32.const 160))
    (call $emit_log (i32.const 64) (i32.const 1) (i32.const 32) (i32.const 8))
    (call $revert (i32.const 128) (i32.const ${REVERT_REASON.length})))
  (func (export "trap")
    (call $storage_write (i32.const 0) (i32.const 160))
    (unreachable))
  (func (export "spin") (loop $l (br $l)))
  (func (export "grow")
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    (i32.store (i32.const 0) (memory.size))
    (call $set_return (i32.const 0) (i32.const 4)))
  (func (export "fill")
    (memory.fill (i32.const 0) (i32.const 7) (i32.const 65536))
    (call $set_return (i32.const 65500) (i32.const 4)))
  (func (export "hash")
    (call $input_copy (i32.const 1024))
    (call $sha3 (i32.const 1024) (call $input_size) (i32.const 512))
    (call $set_return (i32.const 512) (i32.const 32)))
  (func (export "pay")
    (call $input_copy (i32.const 1024))
    (i32.store (i32.const 100) (call $transfer (i32.const 1024) (i32.const 1044)))
    (call $balance (i32.const 1024) (i32.const 1100))
    (call $set_return (i32.const 100) (i32.const 4)))
  (func (export "verify")
    (call $input_copy (i32.const 0))
    (i32.store (i32.const 60000) (call $mldsa_verify (i32.const 0) (i32.const 5261) (i32.sub (call $input_size) (i32.const 5261)) (i32.const 1952)))
    (call $set_return (i32.const 60000) (i32.const 1)))
  (func (export "gas")
    (i64.store (i32.const 0) (call $gas_left))
    (call $set_return (i32.const 0) (i32.const 8)))
  (func $helper (export "_private"))
)`);

/**
 * Calls another contract: `call_it` takes target (20 bytes) ‖ call data, returns the call's
 * result byte ‖ its return data, and marks its own slot 0 so a callee's failure can be seen to
 * leave the caller's state in place.
 */
export const CALLER = wat(`(module ${HOST_IMPORTS}
  (memory (export "memory") 1)
  (data (i32.const 4128) "${watBytes(new Uint8Array(32).fill(0xaa))}")
  (func (export "call_it")
    (call $input_copy (i32.const 1024))
    (i32.store8 (i32.const 0)
      (call $call (i32.const 1024) (i32.const 1044) (i32.sub (call $input_size) (i32.const 20)) (i32.const 2048) (i64.const 0)))
    (call $return_data_copy (i32.const 1))
    (call $storage_write (i32.const 4096) (i32.const 4128))
    (call $set_return (i32.const 0) (i32.add (i32.const 1) (call $return_data_size))))
)`);

/**
 * Forwards along a chain: `fwd` takes addresses; it calls the first with `fwd` and the rest,
 * reverting "chain broke" if that call fails. At the end of the chain it recurses without bound
 * when slot 0 is set (`deep`), to press the shared native-stack budget.
 */
export const FORWARDER = wat(`(module ${HOST_IMPORTS}
  (memory (export "memory") 1)
  (data (i32.const 3000) "chain broke")
  (global $n (mut i32) (i32.const 0))
  (func $rec (param i64) (result i64) (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (i64.add (local.get 0) (call $rec (i64.add (local.get 0) (i64.const 1)))))
  (func (export "fwd") (local $n i32)
    (local.set $n (call $input_size))
    (if (i32.eqz (local.get $n))
      (then
        (if (call $storage_read (i32.const 0) (i32.const 32)) (then (drop (call $rec (i64.const 0)))))
        (return)))
    (call $input_copy (i32.const 1024))
    (memory.copy (i32.const 900) (i32.const 1024) (i32.const 20))
    (i32.store (i32.const 1040) (i32.const 0x64776603))
    (if (i32.eqz (call $call (i32.const 900) (i32.const 1040) (i32.sub (local.get $n) (i32.const 16)) (i32.const 60000) (i64.const 0)))
      (then (call $revert (i32.const 3000) (i32.const 11)))))
  (func (export "deep")
    (i32.store8 (i32.const 99) (i32.const 1))
    (call $storage_write (i32.const 0) (i32.const 68)))
)`);
