// A counter: the smallest useful contract.
//   init(start: u64)      deploy with a starting value (optional, default 0)
//   increment()           adds 1, returns the new value (u64), logs Incremented(by, value)
//   get()                 returns the value (u64)
import { Args, Context, Encoder, Event, Result, Storage } from "svc-sdk";

// Computed inside a function: a module-level `const` with a computed value would need a start
// function, rerun at every call; the build refuses it (contracts/README.md).
function countSlot(): Uint8Array {
  return Storage.slot("count");
}

export function init(): void {
  const args = Args.input();
  const start: u64 = args.hasMore() ? args.u64() : 0;
  args.end();
  Storage.setU64(countSlot(), start);
}

export function increment(): void {
  Args.input().end();
  const value = Storage.getU64(countSlot()) + 1;
  Storage.setU64(countSlot(), value);
  new Event("Incremented").indexAddress(Context.caller()).emit(new Encoder().u64(value));
  Result.u64(value);
}

export function get(): void {
  Result.u64(Storage.getU64(countSlot()));
}
