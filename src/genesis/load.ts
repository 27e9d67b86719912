/** Reading a genesis document from disk with clear errors. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { runningDevnet } from '../devnet/manifest.js';
import { resolve } from 'node:path';
import { GenesisError } from '../core/errors.js';
import { type Genesis, parseGenesis } from '../core/genesis/genesis.js';

/** Genesis path used when none is given: $SVC_GENESIS, else ./genesis.json if present, else the running devnet's, else ./genesis.json. */
export function defaultGenesisPath(): string {
  if (process.env.SVC_GENESIS) return resolve(process.env.SVC_GENESIS);
  const local = resolve('genesis.json');
  if (existsSync(local)) return local;
  return runningDevnet()?.genesis ?? local;
}

/** Reads and validates a genesis file. */
export async function loadGenesisFile(path: string): Promise<Genesis> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new GenesisError(`cannot read genesis file ${path} (pass --genesis FILE; create one with: svc genesis new --validators 4)`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new GenesisError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseGenesis(json);
}
