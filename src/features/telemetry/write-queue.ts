export type WriteQueue = ReturnType<typeof createWriteQueue>;

/**
 * The bounded front of the telemetry writer. Under overload it refuses (the exporter retries
 * after `Retry-After`) instead of queueing without limit: admitted requests and their decoded
 * bytes are both capped, so memory stays bounded however fast data arrives.
 */
export function createWriteQueue(options: {
  /** Requests admitted at once: reading, decoding, waiting for a writer or writing. */
  maxRequests: number;
  /** Decoded payload bytes admitted at once. Must be at least one request's maximum. */
  maxBytes: number;
  /** Writes (transactions) running at once. */
  writers: number;
}) {
  let admitted = 0;
  let bytes = 0;
  let running = 0;
  const waiting: (() => void)[] = [];

  const acquire = (): Promise<void> => {
    if (running < options.writers) {
      running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const releaseWriter = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  return {
    /**
     * Admits a request, or returns undefined when the queue is full (the caller answers 503).
     * `release` the admission in a `finally`.
     */
    admit() {
      if (admitted >= options.maxRequests) return undefined;
      admitted++;
      let reserved = 0;
      let released = false;
      return {
        /** Counts the decoded payload against the byte budget; false when it does not fit. */
        reserve(n: number): boolean {
          if (bytes + n > options.maxBytes) return false;
          bytes += n;
          reserved += n;
          return true;
        },
        /** Runs `write` once a writer is free. */
        async run<T>(write: () => Promise<T>): Promise<T> {
          await acquire();
          try {
            return await write();
          } finally {
            releaseWriter();
          }
        },
        release() {
          if (released) return;
          released = true;
          admitted--;
          bytes -= reserved;
        },
      };
    },
    get admitted() {
      return admitted;
    },
    get bytes() {
      return bytes;
    },
  };
}
