/**
 * `Promise.withResolvers` for Node 20: libp2p 3 calls it and Node only ships it from 22. This module
 * must be evaluated before any libp2p module, so the modules that need it import it first and load
 * libp2p with a dynamic `import()` (ESM hoists static imports, a later assignment would be too late).
 */

interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const P = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof P.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

/** True once the polyfill (or the native method) is in place; importing this module installs it. */
export const withResolversInstalled = true;
