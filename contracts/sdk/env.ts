// Ending a call with a reason. AssemblyScript's own `abort` (failed `assert`, index out of range,
// out of memory) is routed here by the compiler (`--use abort=`), so every failure of a contract is
// a revert with a readable reason instead of an `env.abort` import the VM would refuse.
import { svc_revert } from "./host";

/** Ends the call with status 0, reverting its state changes; `reason` reaches the receipt. */
export function revert(reason: string): void {
  const bytes = String.UTF8.encode(reason);
  svc_revert(changetype<usize>(bytes), bytes.byteLength);
  unreachable();
}

/** Reverts with `reason` unless `condition` holds. */
export function require(condition: bool, reason: string): void {
  if (!condition) revert(reason);
}

/** The compiler's abort hook: a reason with the source position of the failed check. */
export function svcAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let reason = message !== null ? message : "abort";
  if (fileName !== null) reason += " (" + fileName + ":" + line.toString() + ":" + column.toString() + ")";
  revert(reason);
}
