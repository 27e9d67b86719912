/**
 * The connection encrypter of every libp2p connection: Noise XX (X25519, ChaChaPoly, SHA-256) with an
 * ML-KEM-1024 encapsulation mixed into the key schedule (docs/protocol.md, "P2P handshake").
 *
 *   -> kem_pk                       initiator's ephemeral ML-KEM-1024 public key (1568 bytes)
 *   <- kem_ct                       responder's encapsulation to it (1568 bytes)
 *   Noise XX with prologue = tag ‖ genesis_hash ‖ kem_pk ‖ kem_ct, and after `ee`: MixKey(kem_ss)
 *   -> e
 *   <- e, ee, [kem_ss], s, es
 *   -> s, se
 *
 * Both KEM messages are in the prologue, so they are hashed into h before the first Noise message and
 * every AEAD of the handshake authenticates them; the KEM secret enters the chaining key right after
 * `ee`, before the responder's static key and any payload are encrypted. The stock noise package
 * does the Noise part through its two public hooks (`prologueBytes` and the `crypto` implementation,
 * whose HKDF is wrapped), so there is no fork. There is no classical fallback: libp2p is configured
 * with this encrypter only, and its protocol id is not `/noise`.
 */
import './polyfill.js';
import { noise, type ICryptoInterface, type NoiseComponents } from '@chainsafe/libp2p-noise';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { serviceCapabilities, type ConnectionEncrypter, type MessageStream, type SecureConnectionOptions, type SecuredConnection, type StreamMessageEvent } from '@libp2p/interface';
import { randomBytes } from 'node:crypto';
import { KEM_CIPHERTEXT_BYTES, KEM_PUBLIC_KEY_BYTES, kemDecapsulate, kemEncapsulate, kemKeygen } from '../../core/crypto/mlkem.js';
import { SvcError } from '../../core/errors.js';
import { P2pError } from './errors.js';
import { HYBRID_NOISE_PROTOCOL } from './protocol-id.js';

export { HYBRID_NOISE_PROTOCOL };

/** First prologue field: names this construction, so it can never be confused with plain Noise or a later version. */
const PROLOGUE_TAG = new TextEncoder().encode('svc/noise-xx-mlkem1024/v1');

/** Genesis hashes are SHA3-256 digests. */
const GENESIS_HASH_BYTES = 32;

/** The handshake failed before Noise took over (KEM exchange), or the connection closed during it. */
export class HandshakeError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('P2P_HANDSHAKE_FAILED', message, options);
  }
}

/** What the host learns from the encrypter (metrics). */
export interface HandshakeObserver {
  handshake(result: 'success' | 'failure', direction: 'inbound' | 'outbound', seconds?: number): void;
  bytes(direction: 'in' | 'out', n: number): void;
}

export interface HybridNoiseInit {
  /** The chain's genesis hash (32 bytes): a peer of another chain fails the handshake. */
  genesisHash: Uint8Array;
  /** X25519 static key seed; a fresh one per host when absent. */
  staticNoiseKey?: Uint8Array;
  observer?: HandshakeObserver;
}

/** The prologue both sides must agree on, byte for byte. */
export function hybridPrologue(genesisHash: Uint8Array, kemPublicKey: Uint8Array, kemCiphertext: Uint8Array): Uint8Array {
  const out = new Uint8Array(PROLOGUE_TAG.length + genesisHash.length + kemPublicKey.length + kemCiphertext.length);
  let o = 0;
  for (const part of [PROLOGUE_TAG, genesisHash, kemPublicKey, kemCiphertext]) {
    out.set(part, o);
    o += part.length;
  }
  return out;
}

/**
 * Noise's crypto with the KEM secret mixed in: the first HKDF of an XX handshake is the `ee` MixKey,
 * so that call becomes MixKey(DH(e, re)) followed by MixKey(kem_ss). Every later key (the one that
 * encrypts the responder's static key, the payloads, the transport keys) derives from it. AEAD calls
 * are counted for `service_p2p_encrypted_bytes_total`.
 */
export function kemMixingCrypto(sharedSecret: Uint8Array, observer: HandshakeObserver | undefined): ICryptoInterface {
  let kemMixed = false;
  return {
    ...defaultCrypto,
    getHKDF(ck, ikm) {
      if (kemMixed) return defaultCrypto.getHKDF(ck, ikm);
      kemMixed = true;
      const [ckAfterEe] = defaultCrypto.getHKDF(ck, ikm);
      return defaultCrypto.getHKDF(ckAfterEe, sharedSecret);
    },
    chaCha20Poly1305Encrypt(plaintext, nonce, ad, k) {
      const sealed = defaultCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
      observer?.bytes('out', sealed.byteLength);
      return sealed;
    },
    chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst) {
      const opened = defaultCrypto.chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst);
      observer?.bytes('in', ciphertext.byteLength);
      return opened;
    },
  };
}

/** Sends raw bytes, waiting for the transport to drain when it asks to. */
async function sendRaw(stream: MessageStream, data: Uint8Array, signal?: AbortSignal): Promise<void> {
  if (!stream.send(data)) await stream.onDrain(signal ? { signal } : {});
}

/**
 * Reads exactly `n` bytes from the raw connection, then steps aside: anything read past them goes back
 * to the front of the stream for Noise's reader.
 */
function readExactly(stream: MessageStream, n: number, signal?: AbortSignal): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const parts: Uint8Array[] = [];
    let have = 0;
    const cleanup = (): void => {
      stream.removeEventListener('message', onMessage);
      stream.removeEventListener('close', onClose);
      stream.removeEventListener('remoteCloseWrite', onClose);
      signal?.removeEventListener('abort', onAbort);
    };
    const onMessage = (evt: StreamMessageEvent): void => {
      const buf = evt.data.subarray();
      parts.push(buf);
      have += buf.length;
      if (have < n) return;
      cleanup();
      const all = new Uint8Array(have);
      let o = 0;
      for (const p of parts) {
        all.set(p, o);
        o += p.length;
      }
      if (have > n) stream.unshift(all.subarray(n));
      resolve(all.subarray(0, n));
    };
    const onClose = (): void => {
      cleanup();
      reject(new HandshakeError(`connection closed after ${have} of ${n} bytes of the KEM exchange`));
    };
    const onAbort = (): void => {
      cleanup();
      reject(new HandshakeError('KEM exchange aborted', { cause: signal?.reason }));
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    stream.addEventListener('message', onMessage);
    stream.addEventListener('close', onClose);
    stream.addEventListener('remoteCloseWrite', onClose);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The hybrid encrypter (one per libp2p node). */
class HybridNoise implements ConnectionEncrypter {
  readonly protocol = HYBRID_NOISE_PROTOCOL;
  readonly [Symbol.toStringTag] = 'svc-hybrid-noise';
  readonly [serviceCapabilities] = ['@libp2p/connection-encryption'];
  private readonly staticNoiseKey: Uint8Array;

  constructor(
    private readonly components: NoiseComponents,
    private readonly init: HybridNoiseInit,
  ) {
    if (init.genesisHash.length !== GENESIS_HASH_BYTES) throw new P2pError('P2P_BAD_GENESIS_HASH', `genesis hash must be ${GENESIS_HASH_BYTES} bytes, got ${init.genesisHash.length}`);
    this.staticNoiseKey = init.staticNoiseKey ?? new Uint8Array(randomBytes(32));
  }

  /** Handshake as initiator: send the KEM public key, take the ciphertext, then Noise XX bound to both. */
  async secureOutbound(connection: MessageStream, options?: SecureConnectionOptions): Promise<SecuredConnection> {
    const started = performance.now();
    try {
      const kem = kemKeygen();
      await sendRaw(connection, kem.publicKey, options?.signal);
      const ciphertext = await readExactly(connection, KEM_CIPHERTEXT_BYTES, options?.signal);
      // ML-KEM's implicit rejection: a tampered ciphertext decapsulates to an unrelated secret, which
      // then fails the first AEAD of the Noise handshake.
      const sharedSecret = kemDecapsulate(ciphertext, kem.secretKey);
      const secured = await this.noiseFor(kem.publicKey, ciphertext, sharedSecret).secureOutbound(connection, options);
      this.init.observer?.handshake('success', 'outbound', (performance.now() - started) / 1000);
      return secured;
    } catch (err) {
      this.init.observer?.handshake('failure', 'outbound');
      throw err;
    }
  }

  /** Handshake as responder: take the KEM public key, answer with the encapsulation, then Noise XX. */
  async secureInbound(connection: MessageStream, options?: SecureConnectionOptions): Promise<SecuredConnection> {
    const started = performance.now();
    try {
      const publicKey = await readExactly(connection, KEM_PUBLIC_KEY_BYTES, options?.signal);
      let encapsulation: { ciphertext: Uint8Array; sharedSecret: Uint8Array };
      try {
        encapsulation = kemEncapsulate(publicKey);
      } catch (err) {
        // FIPS 203's encapsulation key check: a key whose coefficients are not reduced is refused.
        throw new HandshakeError('invalid ML-KEM-1024 public key', { cause: err });
      }
      await sendRaw(connection, encapsulation.ciphertext, options?.signal);
      const secured = await this.noiseFor(publicKey, encapsulation.ciphertext, encapsulation.sharedSecret).secureInbound(connection, options);
      this.init.observer?.handshake('success', 'inbound', (performance.now() - started) / 1000);
      return secured;
    } catch (err) {
      this.init.observer?.handshake('failure', 'inbound');
      throw err;
    }
  }

  /** A Noise instance for one connection: its prologue and key schedule carry this connection's KEM exchange. */
  private noiseFor(kemPublicKey: Uint8Array, kemCiphertext: Uint8Array, sharedSecret: Uint8Array): ConnectionEncrypter {
    return noise({
      staticNoiseKey: this.staticNoiseKey,
      prologueBytes: hybridPrologue(this.init.genesisHash, kemPublicKey, kemCiphertext),
      crypto: kemMixingCrypto(sharedSecret, this.init.observer),
    })(this.components);
  }
}

/** libp2p `connectionEncrypters` entry for the hybrid handshake. */
export function hybridNoise(init: HybridNoiseInit): (components: NoiseComponents) => ConnectionEncrypter {
  return (components) => new HybridNoise(components, init);
}
