// The one Node API dokit uses (with `nodejs_compat`), declared here so the
// package does not need @types/node next to the Workers types.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R, A extends unknown[] = []>(store: T, callback: (...args: A) => R, ...args: A): R;
    /** @returns a function that runs its argument in the context current now */
    static snapshot(): <R, A extends unknown[]>(fn: (...args: A) => R, ...args: A) => R;
  }
}
