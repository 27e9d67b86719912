/** Public, secret-free description of a stored wallet, shared by `wallet list` and `wallet show`. */
import type { StoredWallet } from './store.js';

export interface WalletSummary {
  name: string;
  path: string;
  version: string;
  address: string;
  ecdsa_address: string | null;
  derivation_path: string | null;
  /** Legacy files hold no key material: they can watch balances but never sign. */
  watch_only: boolean;
  created_at: string | null;
}

/** Summarises a stored wallet without touching its encrypted seed. */
export function summarizeWallet(w: StoredWallet): WalletSummary {
  if (w.wallet.kind === 'legacy') {
    const f = w.wallet.file;
    return { name: w.name, path: w.path, version: 'legacy', address: f.address, ecdsa_address: null, derivation_path: null, watch_only: true, created_at: f.created_at };
  }
  const f = w.wallet.file;
  return { name: w.name, path: w.path, version: f.version, address: f.address, ecdsa_address: f.ecdsa_address, derivation_path: f.derivation_path, watch_only: false, created_at: null };
}
