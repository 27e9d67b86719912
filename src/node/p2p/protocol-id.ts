/** Protocol ids of the P2P host that code outside it may name without loading libp2p. */

/** Connection encrypter of the hybrid Noise XX + ML-KEM-1024 handshake (multistream-select id). */
export const HYBRID_NOISE_PROTOCOL = '/svc/noise-mlkem1024/1.0.0';
