// A fungible token.
//   init(name: string, symbol: string, decimals: u64, supply: u256)
//                                      mints `supply` (smallest units) to the deployer
//   name() -> string, symbol() -> string, decimals() -> u64, totalSupply() -> u256
//   balanceOf(owner: address) -> u256
//   transfer(to: address, amount: u256) -> bool
//   approve(spender: address, amount: u256) -> bool
//   allowance(owner: address, spender: address) -> u256
//   transferFrom(from: address, to: address, amount: u256) -> bool
// Events: Transfer(from indexed, to indexed, amount) and Approval(owner indexed, spender indexed,
// amount); the mint in init is a Transfer from the zero address.
import { Address, Args, Context, Encoder, Event, require, Result, Storage, U256 } from "svc-sdk";

function balanceSlot(owner: Address): Uint8Array {
  return Storage.mapSlot("balances", owner.bytes);
}

function allowanceSlot(owner: Address, spender: Address): Uint8Array {
  return Storage.mapSlot2("allowances", owner.bytes, spender.bytes);
}

function move(from: Address, to: Address, amount: U256): void {
  const fromBalance = Storage.getU256(balanceSlot(from));
  require(fromBalance.gte(amount), "insufficient balance");
  Storage.setU256(balanceSlot(from), fromBalance.sub(amount));
  Storage.setU256(balanceSlot(to), Storage.getU256(balanceSlot(to)).add(amount));
  new Event("Transfer").indexAddress(from).indexAddress(to).emit(new Encoder().u256(amount));
}

export function init(): void {
  const args = Args.input();
  const name = args.string();
  const symbol = args.string();
  const decimals = args.u64();
  const supply = args.u256();
  args.end();
  require(decimals <= 36, "decimals must be at most 36");
  const owner = Context.caller();
  Storage.setString(Storage.slot("name"), name);
  Storage.setString(Storage.slot("symbol"), symbol);
  Storage.setU64(Storage.slot("decimals"), decimals);
  Storage.setU256(Storage.slot("totalSupply"), supply);
  Storage.setU256(balanceSlot(owner), supply);
  new Event("Transfer").indexAddress(Address.zero()).indexAddress(owner).emit(new Encoder().u256(supply));
}

export function name(): void {
  Result.string(Storage.getString(Storage.slot("name")));
}

export function symbol(): void {
  Result.string(Storage.getString(Storage.slot("symbol")));
}

export function decimals(): void {
  Result.u64(Storage.getU64(Storage.slot("decimals")));
}

export function totalSupply(): void {
  Result.u256(Storage.getU256(Storage.slot("totalSupply")));
}

export function balanceOf(): void {
  const args = Args.input();
  const owner = args.address();
  args.end();
  Result.u256(Storage.getU256(balanceSlot(owner)));
}

export function transfer(): void {
  const args = Args.input();
  const to = args.address();
  const amount = args.u256();
  args.end();
  move(Context.caller(), to, amount);
  Result.bool(true);
}

export function approve(): void {
  const args = Args.input();
  const spender = args.address();
  const amount = args.u256();
  args.end();
  const owner = Context.caller();
  Storage.setU256(allowanceSlot(owner, spender), amount);
  new Event("Approval").indexAddress(owner).indexAddress(spender).emit(new Encoder().u256(amount));
  Result.bool(true);
}

export function allowance(): void {
  const args = Args.input();
  const owner = args.address();
  const spender = args.address();
  args.end();
  Result.u256(Storage.getU256(allowanceSlot(owner, spender)));
}

export function transferFrom(): void {
  const args = Args.input();
  const from = args.address();
  const to = args.address();
  const amount = args.u256();
  args.end();
  const spender = Context.caller();
  const allowed = Storage.getU256(allowanceSlot(from, spender));
  require(allowed.gte(amount), "allowance exceeded");
  Storage.setU256(allowanceSlot(from, spender), allowed.sub(amount));
  move(from, to, amount);
  Result.bool(true);
}
