// The raw host ABI (module "svc", version 1): the only imports the VM accepts. Pointers and
// lengths are i32 offsets into the contract's exported memory; numbers are i64. Contracts
// normally use the typed wrappers in the other SDK files instead of these.

// @ts-ignore: decorator
@external("svc", "input_size") export declare function svc_input_size(): i32;
// @ts-ignore: decorator
@external("svc", "input_copy") export declare function svc_input_copy(ptr: usize): void;

// @ts-ignore: decorator
@external("svc", "storage_read") export declare function svc_storage_read(keyPtr: usize, outPtr: usize): i32;
// @ts-ignore: decorator
@external("svc", "storage_write") export declare function svc_storage_write(keyPtr: usize, valuePtr: usize): void;
// @ts-ignore: decorator
@external("svc", "storage_remove") export declare function svc_storage_remove(keyPtr: usize): void;

// @ts-ignore: decorator
@external("svc", "caller") export declare function svc_caller(outPtr: usize): void;
// @ts-ignore: decorator
@external("svc", "self_address") export declare function svc_self_address(outPtr: usize): void;
// @ts-ignore: decorator
@external("svc", "call_value") export declare function svc_call_value(outPtr: usize): void;
// @ts-ignore: decorator
@external("svc", "block_number") export declare function svc_block_number(): i64;
// @ts-ignore: decorator
@external("svc", "block_timestamp") export declare function svc_block_timestamp(): i64;

// @ts-ignore: decorator
@external("svc", "balance") export declare function svc_balance(addrPtr: usize, outPtr: usize): void;
// @ts-ignore: decorator
@external("svc", "transfer") export declare function svc_transfer(addrPtr: usize, amountPtr: usize): i32;

// @ts-ignore: decorator
@external("svc", "call") export declare function svc_call(addrPtr: usize, inputPtr: usize, inputLen: i32, valuePtr: usize, gas: i64): i32;
// @ts-ignore: decorator
@external("svc", "return_data_size") export declare function svc_return_data_size(): i32;
// @ts-ignore: decorator
@external("svc", "return_data_copy") export declare function svc_return_data_copy(ptr: usize): void;

// @ts-ignore: decorator
@external("svc", "emit_log") export declare function svc_emit_log(topicsPtr: usize, topicCount: i32, dataPtr: usize, dataLen: i32): void;

// @ts-ignore: decorator
@external("svc", "set_return") export declare function svc_set_return(ptr: usize, len: i32): void;
// @ts-ignore: decorator
@external("svc", "revert") export declare function svc_revert(ptr: usize, len: i32): void;

// @ts-ignore: decorator
@external("svc", "sha3") export declare function svc_sha3(ptr: usize, len: i32, outPtr: usize): void;
// @ts-ignore: decorator
@external("svc", "mldsa_verify") export declare function svc_mldsa_verify(pkPtr: usize, msgPtr: usize, msgLen: i32, sigPtr: usize): i32;

// @ts-ignore: decorator
@external("svc", "gas_left") export declare function svc_gas_left(): i64;
