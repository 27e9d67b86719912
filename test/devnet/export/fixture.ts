/**
 * The golden network of the export tests (not a test file itself): 4 validators, 2 producing
 * nodes, 1 follower, a fixed genesis time and fixed secrets, so every generated file is the same
 * on every run and machine.
 */
import { readFile } from 'node:fs/promises';
import { type ExportNetwork, type SecretName, planExport } from '../../../src/devnet/export/model.js';
import { renderExport } from '../../../src/devnet/export/write.js';
import { SHIPPED_ALERT_RULES, SHIPPED_DASHBOARD } from '../../../src/devnet/monitoring.js';
import type { ValidatorProcesses } from '../../../src/devnet/manifest.js';

/** 2026-01-01T00:00:00Z. */
export const GOLDEN_GENESIS_TIME = 1_767_225_600;

/** Secrets of the golden network: recognisable, so a test can prove they appear nowhere but in the Secret. */
export const GOLDEN_SECRETS: Record<SecretName, string> = {
  'keystore-password': 'golden-keystore-password',
  'validator-token': 'a1'.repeat(32),
  'engine-jwt': 'b2'.repeat(32),
};

let planned: Promise<ExportNetwork> | undefined;

/** The golden network, planned once per test process (building its genesis takes a second). */
export function goldenNetwork(): Promise<ExportNetwork> {
  planned ??= planExport({ validators: 4, producers: 2, followers: 1, genesisTime: GOLDEN_GENESIS_TIME, image: 'svc:0.1.0', kdfMemoryKib: 256 });
  return planned;
}

/** The golden network's files in `format`, by path relative to the output directory; `per-validator`: a validator client per validator instead of per node. */
export async function goldenFiles(format: 'compose' | 'k8s', packing: ValidatorProcesses = 'per-node'): Promise<Map<string, string>> {
  const net = await goldenNetwork();
  return renderExport(packing === 'per-node' ? net : { ...net, options: { ...net.options, validatorProcesses: packing } }, format, GOLDEN_SECRETS);
}

/** The shipped monitoring files the export copies or embeds. */
export async function shippedMonitoring(): Promise<{ alerts: string; dashboard: string }> {
  return { alerts: await readFile(SHIPPED_ALERT_RULES, 'utf8'), dashboard: await readFile(SHIPPED_DASHBOARD, 'utf8') };
}
