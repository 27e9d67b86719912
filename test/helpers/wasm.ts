/**
 * Node's WebAssembly engine for tests (the project's type libraries do not declare the
 * WebAssembly global): compile a module, list its imports and exports as the engine sees them.
 */

interface EngineDescriptor {
  module?: string;
  name: string;
  kind: string;
}
interface WebAssemblyGlobal {
  Module: { new (bytes: Uint8Array): object; imports(m: object): EngineDescriptor[]; exports(m: object): EngineDescriptor[] };
}

const engine = (globalThis as unknown as { WebAssembly: WebAssemblyGlobal }).WebAssembly;

/** Compiles `bytes` with Node's engine (throws if the module is invalid). */
function compileModule(bytes: Uint8Array): object {
  return new engine.Module(bytes);
}

/** Imports as the engine reports them: "module.name" for functions, with the kind otherwise. */
export function engineImports(bytes: Uint8Array): EngineDescriptor[] {
  return engine.Module.imports(compileModule(bytes));
}

/** Exports as the engine reports them. */
export function engineExports(bytes: Uint8Array): EngineDescriptor[] {
  return engine.Module.exports(compileModule(bytes));
}
