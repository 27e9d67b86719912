// A contract that calls another: it increments a counter contract (examples/counter.ts) and
// returns the counter's new value.
//   init(counter: address)        remembers the counter to call
//   bump() -> u64                 calls counter.increment(); reverts if that call fails
//   bumpBy(times: u64) -> u64     calls it `times` times (at most 10)
//   tryCall(method: string) -> bool
//                                 calls counter.<method>() and reports success instead of
//                                 reverting: tryCall("nope") returns false, the failed call's
//                                 changes are undone and this call still succeeds
//   counter() -> address
import { Address, Args, Contract, Encoder, Event, revert, require, Result, Storage } from "svc-sdk";

function counterSlot(): Uint8Array {
  return Storage.slot("counter");
}

function increment(counter: Address): u64 {
  const res = Contract.call(counter, "increment");
  if (!res.success) revert("counter call failed: " + res.reason());
  return res.values().u64();
}

export function init(): void {
  const args = Args.input();
  const counter = args.address();
  args.end();
  require(!counter.isZero(), "counter address must not be zero");
  Storage.setAddress(counterSlot(), counter);
}

export function bump(): void {
  Args.input().end();
  Result.u64(increment(Storage.getAddress(counterSlot())));
}

export function bumpBy(): void {
  const args = Args.input();
  const times = args.u64();
  args.end();
  require(times >= 1 && times <= 10, "times must be 1..10");
  const counter = Storage.getAddress(counterSlot());
  let value: u64 = 0;
  for (let i: u64 = 0; i < times; i++) value = increment(counter);
  Result.u64(value);
}

export function tryCall(): void {
  const args = Args.input();
  const method = args.string();
  args.end();
  const res = Contract.call(Storage.getAddress(counterSlot()), method);
  if (!res.success) new Event("CallFailed").emit(new Encoder().string(method).string(res.reason()));
  Result.bool(res.success);
}

export function counter(): void {
  Result.address(Storage.getAddress(counterSlot()));
}
