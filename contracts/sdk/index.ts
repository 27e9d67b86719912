// svc contract SDK (AssemblyScript): `import { … } from "svc-sdk"` in a contract, then
// `svc contract build FILE.ts`. See contracts/README.md.
export { Address, ADDRESS_SIZE } from "./address";
export { Args, Encoder, Result, TAG_ADDRESS, TAG_BOOL, TAG_BYTES, TAG_BYTES32, TAG_STRING, TAG_U256, TAG_U64 } from "./codec";
export { Context } from "./context";
export { CallResult, Contract, encodeCallData, MAX_METHOD_LENGTH } from "./contract";
export { mldsaVerify, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE, sha3, sha3String } from "./crypto";
export { revert, require } from "./env";
export { Event, MAX_TOPICS } from "./events";
export { SLOT_SIZE, Storage } from "./storage";
export { readU64BE, U256, writeU64BE } from "./u256";
