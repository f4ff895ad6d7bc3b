/** `load` shared by every caller after the first (`loadOnce`). */
export type LoadOnce<T> = (() => Promise<T>) & {
  /** The load under way or done, without starting one: what a `close()` has to undo. */
  started(): Promise<T> | undefined;
};

/**
 * `load` run on the first call and its promise shared by every call after; a load that failed is
 * run again by the next call. For what a start should not pay for: a module loaded with its first
 * use, a client built when first asked for.
 */
export function loadOnce<T>(load: () => Promise<T>): LoadOnce<T> {
  let loading: Promise<T> | undefined;
  const get = () => {
    loading ??= (async () => load())().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  return Object.assign(get, { started: () => loading });
}
