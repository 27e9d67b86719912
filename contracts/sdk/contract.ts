// Value transfers and calls to other contracts. A call runs the callee's method with its own
// storage; the callee sees this contract as its caller. A call to a contract already on the call
// stack (re-entrancy) fails, and calls nest at most 64 deep.
import { Address } from "./address";
import { Args, Encoder } from "./codec";
import { revert } from "./env";
import { svc_balance, svc_call, svc_gas_left, svc_return_data_copy, svc_return_data_size, svc_transfer } from "./host";
import { U256 } from "./u256";

/** Longest method name the calldata format allows. */
export const MAX_METHOD_LENGTH: i32 = 64;

/** The outcome of Contract.call. */
export class CallResult {
  constructor(public readonly success: bool, public readonly data: Uint8Array) {}

  /** The callee's return values, to read in order. */
  values(): Args {
    return new Args(this.data);
  }

  /** The callee's revert reason (empty when it trapped or ran out of gas without one). */
  reason(): string {
    return String.UTF8.decode(this.data.buffer);
  }
}

export class Contract {
  /** The balance (wei) of any account or contract. */
  static balance(a: Address): U256 {
    const out = new Uint8Array(32);
    svc_balance(a.bytes.dataStart, out.dataStart);
    return U256.fromBytes(out);
  }

  /** Sends `amount` wei from this contract to `to`; false if this contract's balance is too low. */
  static transfer(to: Address, amount: U256): bool {
    const value = amount.toBytes();
    return svc_transfer(to.bytes.dataStart, value.dataStart) == 0;
  }

  /**
   * Calls `method` on the contract at `to` with `args`, sending `value` wei and at most `gas` gas
   * (0 forwards all the gas left). A failure of the callee (revert, trap, out of gas) reverts the
   * callee's changes only and returns success = false with its reason; the caller decides.
   */
  static call(to: Address, method: string, args: Encoder | null = null, value: U256 = U256.zero(), gas: u64 = 0): CallResult {
    const input = encodeCallData(method, args);
    const v = value.toBytes();
    const limit = gas == 0 ? <u64>svc_gas_left() : gas;
    const ok = svc_call(to.bytes.dataStart, input.dataStart, input.length, v.dataStart, <i64>limit);
    const data = new Uint8Array(svc_return_data_size());
    if (data.length > 0) svc_return_data_copy(data.dataStart);
    return new CallResult(ok == 1, data);
  }
}

/** Call data: u8 method length ‖ method name (ASCII) ‖ tagged arguments. */
export function encodeCallData(method: string, args: Encoder | null): Uint8Array {
  const n = method.length;
  if (n < 1 || n > MAX_METHOD_LENGTH) revert("call: method name must be 1.." + MAX_METHOD_LENGTH.toString() + " characters");
  const body = args !== null ? args.toBytes() : new Uint8Array(0);
  const out = new Uint8Array(1 + n + body.length);
  out[0] = <u8>n;
  for (let i = 0; i < n; i++) {
    const c = method.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) revert("call: method name must be printable ASCII");
    out[1 + i] = <u8>c;
  }
  out.set(body, 1 + n);
  return out;
}
