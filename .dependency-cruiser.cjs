/**
 * svc's layer rules (docs/architecture.md, "Layers"), checked by dependency-cruiser over the
 * TypeScript sources in `npm test` (test/architecture/dependencies.test.ts; by hand:
 * `npx depcruise src bench test/helpers --config .dependency-cruiser.cjs`).
 *
 * Each rule names the folders a layer may import (anything else under src/ is refused), so a new
 * dependency direction is a decision written here, not an accident. Imports of Node built-ins and
 * npm packages are not ruled on. Type-only imports count like any other: a type is part of what a
 * layer knows.
 */

/** A path pattern of src/ folders, for `pathNot`. */
const within = (...folders) => `^src/(${folders.join('|')})/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle anywhere: a cycle means two modules are one, and the order they load in decides what the other sees.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'Every relative import resolves to a source file; otherwise the rules below would see nothing to rule on.',
      from: {},
      to: { couldNotResolve: true, path: '^[.]' },
    },
    {
      name: 'core-imports-core',
      severity: 'error',
      comment: 'src/core is the pure protocol every layer shares: it imports nothing of svc outside itself.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: within('core') },
    },
    {
      name: 'util-imports-core',
      severity: 'error',
      comment: 'src/util is infrastructure below every layer (files, logs, HTTP transport): only core.',
      from: { path: '^src/util/' },
      to: { path: '^src/', pathNot: [within('util', 'core')] },
    },
    {
      name: 'api-imports-core',
      severity: 'error',
      comment: 'src/api (wire types and the route table) is what servers and clients share: only core.',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: [within('api', 'core')] },
    },
    {
      name: 'wallet-imports-core-util',
      severity: 'error',
      comment: 'src/wallet (keys, keystores, signing transactions) is a library the clients and the validator use: only core and util.',
      from: { path: '^src/wallet/' },
      to: { path: '^src/', pathNot: [within('wallet', 'core', 'util')] },
    },
    {
      name: 'genesis-imports-libraries',
      severity: 'error',
      comment: 'src/genesis (building and reading genesis files) is tooling below the clients: core, util, wallet.',
      from: { path: '^src/genesis/' },
      to: { path: '^src/', pathNot: [within('genesis', 'core', 'util', 'wallet')] },
    },
    {
      name: 'client-imports-api-core-util',
      severity: 'error',
      comment: 'src/client talks to the nodes over their APIs: api, core, util, and the wallet and genesis libraries (signing, chain files); never a node, the devnet or the CLI.',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: [within('client', 'api', 'core', 'util', 'wallet', 'genesis')] },
    },
    {
      name: 'node-infrastructure-imports',
      severity: 'error',
      comment: 'src/node/shared and src/node/p2p serve every layer, so they import no layer: api, core, util, and only themselves.',
      from: { path: '^src/node/(shared|p2p)/' },
      to: { path: '^src/', pathNot: ['^src/node/$1/', within('api', 'core', 'util')] },
    },
    {
      name: 'node-layers-apart',
      severity: 'error',
      comment:
        'A layer under src/node (beacon, execution, validator) talks to the others only over HTTP and P2P: it imports node/shared, node/p2p, api, client, core, util, wallet (and vm, the VM as its own module), never another layer.',
      from: { path: '^src/node/(beacon|execution|validator)/' },
      to: { path: '^src/', pathNot: ['^src/node/$1/', '^src/node/(shared|p2p)/', within('api', 'client', 'core', 'util', 'wallet', 'vm')] },
    },
    {
      name: 'contract-imports-core',
      severity: 'error',
      comment: "src/contract (the contract compiler) checks its output with the VM's public module, never node/execution internals: core (and vm).",
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: [within('contract', 'core', 'util', 'vm')] },
    },
    {
      name: 'devnet-below-cli',
      severity: 'error',
      comment: 'src/devnet orchestrates the layers for the CLI: it never imports the CLI (src/cli, src/commands).',
      from: { path: '^src/devnet/' },
      to: { path: '^src/(cli|commands)/' },
    },
    {
      name: 'commands-on-top',
      severity: 'error',
      comment: 'Commands are the top: nothing under src/ imports them (src/cli holds what several share).',
      from: { path: '^src/', pathNot: '^src/commands/' },
      to: { path: '^src/commands/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
