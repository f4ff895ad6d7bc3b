import { createHistogram, performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";

/**
 * A small closed-loop load generator (autocannon is not a dependency): `connections` keep-alive
 * connections, each with one request in flight at a time, for a warm-up and then a measured window.
 * Every response must have `expectStatus` (and `expectBody` when given); anything else is an error.
 */
export type LoadRequest = {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The status this request must get (default `expectStatus`). */
  expectStatus?: number;
  /** Told every answer with the expected status (e.g. to keep a resource's ETag). */
  after?: (headers: Record<string, string | string[] | undefined>, body: string) => void;
};

export type LoadOptions = {
  /** The server's origin, with the path requested when `request` is not given. */
  url: string;
  /**
   * Each request in turn, for worker `worker` (0 … connections − 1): requests that differ (other
   * tenants, keys, ids; writes with their own Idempotency-Key). Default: GET `url` every time.
   */
  request?: (worker: number) => LoadRequest;
  headers?: Record<string, string>;
  connections: number;
  warmupMs: number;
  durationMs: number;
  expectStatus?: number;
  expectBody?: string;
  /** Stops the run early (e.g. on Ctrl-C): in-flight requests are dropped. */
  signal?: AbortSignal;
  /** Called at the start and the end of the measured window (e.g. to sample CPU counters). */
  onWindow?: (edge: "start" | "end") => void;
};

export type LoadResult = {
  /** Successful responses to requests started inside the measured window. */
  requests: number;
  seconds: number;
  rps: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Failures over warm-up and window: a run with any is a failed run. */
  errors: number;
  errorSamples: string[];
};

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const url = new URL(opts.url);
  const path = `${url.pathname}${url.search}`;
  const expectStatus = opts.expectStatus ?? 200;
  const pool = new Pool(url.origin, {
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
  });
  // Latencies in microseconds (the histogram records integers ≥ 1).
  const histogram = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  const errorSamples = new Map<string, number>();
  let errors = 0;
  let requests = 0;
  let lastDone = 0;

  const noteError = (what: string) => {
    errors += 1;
    errorSamples.set(what, (errorSamples.get(what) ?? 0) + 1);
  };

  const startedAt = performance.now();
  const measureStart = startedAt + opts.warmupMs;
  const measureEnd = measureStart + opts.durationMs;
  let windowStarted = false;
  const windowTimer = setTimeout(() => {
    windowStarted = true;
    opts.onWindow?.("start");
  }, opts.warmupMs);

  const worker = async (_: unknown, index: number) => {
    for (;;) {
      const start = performance.now();
      if (start >= measureEnd || opts.signal?.aborted) return;
      try {
        const next: LoadRequest = opts.request ? opts.request(index) : { path, headers: opts.headers ?? {} };
        const res = await pool.request({
          path: next.path,
          method: (next.method ?? "GET") as "GET",
          headers: next.headers,
          body: next.body,
        });
        const body = await res.body.text();
        const done = performance.now();
        let ok = false;
        if (res.statusCode !== (next.expectStatus ?? expectStatus)) {
          noteError(`HTTP ${res.statusCode} ${next.method ?? "GET"} ${next.path}: ${body.slice(0, 200)}`);
        } else if (opts.expectBody !== undefined && body !== opts.expectBody) {
          noteError(`unexpected body: ${body.slice(0, 200)}`);
        } else {
          ok = true;
          next.after?.(res.headers, body);
        }
        if (ok && start >= measureStart) {
          histogram.record(Math.max(1, Math.round((done - start) * 1000)));
          requests += 1;
          if (done > lastDone) lastDone = done;
        }
      } catch (error) {
        noteError(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
        await sleep(10); // a refused connection must not turn into a busy loop
      }
    }
  };

  const abort = () => void pool.destroy().catch(() => {});
  opts.signal?.addEventListener("abort", abort, { once: true });
  try {
    await Promise.all(Array.from({ length: opts.connections }, worker));
  } finally {
    opts.signal?.removeEventListener("abort", abort);
    clearTimeout(windowTimer);
    await pool.close().catch(() => {});
  }
  if (windowStarted) opts.onWindow?.("end");
  const seconds = (Math.max(measureEnd, lastDone) - measureStart) / 1000;
  const ms = (us: number) => us / 1000;
  const samples = [...errorSamples].map(([what, n]) => `${n}× ${what}`).slice(0, 5);
  return {
    requests,
    seconds,
    rps: requests / seconds,
    meanMs: requests ? ms(histogram.mean) : 0,
    p50Ms: requests ? ms(histogram.percentile(50)) : 0,
    p90Ms: requests ? ms(histogram.percentile(90)) : 0,
    p99Ms: requests ? ms(histogram.percentile(99)) : 0,
    maxMs: requests ? ms(histogram.max) : 0,
    errors,
    errorSamples: samples,
  };
}
