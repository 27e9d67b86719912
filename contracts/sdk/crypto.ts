// Hashing and signature checks, computed by the host (charged per the gas schedule).
import { svc_mldsa_verify, svc_sha3 } from "./host";

/** ML-DSA-65 public key size in bytes. */
export const MLDSA_PUBLIC_KEY_SIZE: i32 = 1952;
/** ML-DSA-65 signature size in bytes. */
export const MLDSA_SIGNATURE_SIZE: i32 = 3309;

/** SHA3-256 of `data` (32 bytes). */
export function sha3(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  svc_sha3(data.dataStart, data.length, out.dataStart);
  return out;
}

/** SHA3-256 of a string's UTF-8 bytes. */
export function sha3String(text: string): Uint8Array {
  return sha3(Uint8Array.wrap(String.UTF8.encode(text)));
}

/** Whether `signature` is a valid ML-DSA-65 signature of `message` by `publicKey`; wrong sizes are simply invalid. */
export function mldsaVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): bool {
  if (publicKey.length != MLDSA_PUBLIC_KEY_SIZE || signature.length != MLDSA_SIGNATURE_SIZE) return false;
  return svc_mldsa_verify(publicKey.dataStart, message.dataStart, message.length, signature.dataStart) == 1;
}
