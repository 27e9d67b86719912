/** Reading a genesis document from disk with clear errors. */
import { readFile } from 'node:fs/promises';
import { GenesisError } from '../core/errors.js';
import { type Genesis, parseGenesis } from '../core/genesis/genesis.js';

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
