/**
 * `load` run on the first call and its promise shared by every call after; a load that failed is
 * run again by the next call. For what a start should not pay for: a module loaded with its first
 * use, a client built when first asked for.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= (async () => load())().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
