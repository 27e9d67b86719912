// What a call knows about itself: who called, which contract runs, the value sent, the block.
import { Address, ADDRESS_SIZE } from "./address";
import { svc_block_number, svc_block_timestamp, svc_call_value, svc_caller, svc_gas_left, svc_self_address } from "./host";
import { U256 } from "./u256";

export class Context {
  /** The immediate caller: the sender of the transaction, or the calling contract. */
  static caller(): Address {
    const out = new Uint8Array(ADDRESS_SIZE);
    svc_caller(out.dataStart);
    return new Address(out);
  }

  /** This contract's own address. */
  static self(): Address {
    const out = new Uint8Array(ADDRESS_SIZE);
    svc_self_address(out.dataStart);
    return new Address(out);
  }

  /** The value (wei) sent with this call, already credited to this contract. */
  static value(): U256 {
    const out = new Uint8Array(32);
    svc_call_value(out.dataStart);
    return U256.fromBytes(out);
  }

  /** The number of the block being executed. */
  static blockNumber(): u64 {
    return <u64>svc_block_number();
  }

  /** The block's timestamp in milliseconds since the Unix epoch. */
  static timestamp(): u64 {
    return <u64>svc_block_timestamp();
  }

  /** Gas left in this call. */
  static gasLeft(): u64 {
    return <u64>svc_gas_left();
  }
}
