export type WriteQueueOptions = {
  /** Requests admitted at once: reading, decoding, waiting for a writer or writing. */
  maxRequests: number;
  /** Decoded payload bytes admitted at once. Must be at least one request's maximum. */
  maxBytes: number;
  /** Writes (transactions) running at once. */
  writers: number;
};

/** One admitted request's hold on the queue. `release` it in a `finally`. */
export type Admission = {
  /** Counts the decoded payload against the byte budget; false when it does not fit. */
  reserve(bytes: number): boolean;
  /** Runs `write` once a writer is free. */
  run<T>(write: () => Promise<T>): Promise<T>;
  release(): void;
};

export type WriteQueue = {
  /** Admits a request, or returns undefined when the queue is full (the caller answers 503). */
  admit(): Admission | undefined;
  readonly admitted: number;
  readonly bytes: number;
};

/**
 * The bounded front of the telemetry writer. Under overload it refuses (the exporter retries
 * after `Retry-After`) instead of queueing without limit: admitted requests and their decoded
 * bytes are both capped, so memory stays bounded however fast data arrives.
 */
export function createWriteQueue(options: WriteQueueOptions): WriteQueue {
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
    admit() {
      if (admitted >= options.maxRequests) return undefined;
      admitted++;
      let reserved = 0;
      let released = false;
      return {
        reserve(n) {
          if (bytes + n > options.maxBytes) return false;
          bytes += n;
          reserved += n;
          return true;
        },
        async run(write) {
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
