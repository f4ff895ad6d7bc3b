/**
 * Commits the span writes of concurrent requests together: one transaction, one COPY per table,
 * one commit for up to `maxBatch` requests. A transaction's fixed cost — its statements, the COPY
 * set-up, the commit — was most of what PostgreSQL spent on a 512-span request (bench:ingest: 4×
 * larger requests stored 35 % more spans/s); concurrent requests now share it.
 *
 * No request waits for company: a write starts at once when fewer than `maxFlushing` batches
 * are being written, and only writes that arrive meanwhile are gathered into the next batch.
 * A batch that fails (most often one request's spans were stored before: an exporter's retry)
 * is written again request by request (`single`), so each request gets its own outcome and
 * nothing is stored twice or lost. At most `maxFlushing` transactions run at once, replays
 * included: the store's connection pool is shared with everything else.
 */
export function batchWrites<W>(options: {
  maxBatch: number;
  maxFlushing: number;
  /** All of `batch` in one transaction, or nothing. */
  writeBatch(batch: W[]): Promise<void>;
  /** One write on its own (and its own fallbacks). */
  single(write: W): Promise<void>;
  onBatchFailed?(error: unknown, size: number): void;
}) {
  type Pending = { write: W; resolve(): void; reject(error: unknown): void };
  const pending: Pending[] = [];
  let flushing = 0;

  const settle = (item: Pending, outcome: Promise<void>) => outcome.then(item.resolve, item.reject);

  const flush = async (batch: Pending[]) => {
    if (batch.length === 1) {
      await settle(batch[0] as Pending, options.single((batch[0] as Pending).write));
      return;
    }
    try {
      await options.writeBatch(batch.map((p) => p.write));
    } catch (error) {
      options.onBatchFailed?.(error, batch.length);
      // One after the other: a replay holds no more connections than the batch did.
      for (const p of batch) await settle(p, options.single(p.write));
      return;
    }
    for (const p of batch) p.resolve();
  };

  const pump = () => {
    while (flushing < options.maxFlushing && pending.length > 0) {
      const batch = pending.splice(0, options.maxBatch);
      flushing++;
      void flush(batch).finally(() => {
        flushing--;
        pump();
      });
    }
  };

  return {
    write(write: W): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        pending.push({ write, resolve, reject });
        pump();
      });
    },
  };
}
