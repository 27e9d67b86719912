/**
 * The slice of the WebAssembly JavaScript API the contract VM uses. The project compiles with
 * lib ES2023 and @types/node, neither of which declares it (it lives in lib.dom).
 */
declare namespace WebAssembly {
  type ImportValue = ((...args: never[]) => unknown) | Global | Memory;
  type Imports = Record<string, Record<string, ImportValue>>;
  type ExportValue = ((...args: never[]) => unknown) | Global | Memory;
  type Exports = Record<string, ExportValue>;

  class Module {
    constructor(bytes: Uint8Array);
  }
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
  }
  class Global {
    value: unknown;
  }
  class CompileError extends Error {}
  class LinkError extends Error {}
  class RuntimeError extends Error {}
  function validate(bytes: Uint8Array): boolean;
}
