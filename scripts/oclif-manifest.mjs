// Writes oclif.manifest.json (the command list with each command's flags) after the build.
// Without it oclif imports every command module, with all their dependencies, to find the one to
// run: ~0.5 s of CPU at the start of every `svc` process, four times over on the critical path of
// `svc devnet up` (the CLI, then execution, beacon and validator processes).
// The file is generated, never committed: a stale one would hide new commands, so `npm run build`
// deletes it first and writes it last.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = fileURLToPath(new URL('..', import.meta.url));
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
writeFileSync(new URL('../oclif.manifest.json', import.meta.url), JSON.stringify(plugin.manifest) + '\n');
console.log(`oclif manifest: ${Object.keys(plugin.manifest.commands).length} commands -> oclif.manifest.json`);
