const { loadValidatorKeystores } = await import('./dist/src/cli/validator-keys.js');
const { loadGenesisFile } = await import('./dist/src/genesis/load.js');
const dir = process.argv[2];
const g = await loadGenesisFile(dir + '/genesis/genesis.json');
const c0 = process.cpuUsage(); const t = performance.now();
const keys = await loadValidatorKeystores(g, { keystoresDir: undefined, keystores: g.validators.map((v) => `${dir}/genesis/keystores/validator-${v.index}.json`) });
const c = process.cpuUsage(c0);
console.log(keys.length, 'wall', (performance.now() - t).toFixed(0), 'user', (c.user / 1000).toFixed(0), 'sys', (c.system / 1000).toFixed(0));
