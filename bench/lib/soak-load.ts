/**
 * bench:soak's load: a fixed number of clients, each paced to a fixed rate, so that the servers
 * see the same traffic in the tenth minute as in the first and memory is the only thing that may
 * change. REST clients read (`/me`, the environment, its MCP connections, its problems) with the
 * owner's API key; OTLP exporters post protobuf trace batches with a publishable key. Every
 * client alternates between the instances, so each gets the same mix. A client whose response
 * is late sends its next request at once but never bursts to catch up.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { traceBatch } from "./otlp-batches.ts";

export type SoakLoadOptions = {
  /** Base URLs of the instances, e.g. http://127.0.0.1:40123. */
  bases: string[];
  environmentId: string;
  apiKey: string;
  publishableKey: string;
  restClients: number;
  /** Requests per second of each REST client. */
  restRate: number;
  exporters: number;
  /** Posts per second of each exporter. */
  exportRate: number;
  spansPerExport: number;
  /** Stops the load: in-flight requests finish, no new ones start. */
  signal: AbortSignal;
};

/** Responses by status class; `failed` is anything without a 2xx–5xx status (refused, timed out, reset). */
export type Tally = { ok: number; client: number; server: number; failed: number };

/** What each instance got so far; the reporter diffs two readings for an interval. */
export type InstanceCounts = { rest: Tally; otlp: Tally; spans: number };

export type SoakLoad = {
  counts: InstanceCounts[];
  /** The first few distinct failures, with how often each occurred. */
  failures: Map<string, number>;
  /** Settles when every client has stopped (after `signal` aborts). */
  done: Promise<void>;
};

/** A response slower than this counts as failed: steady load at a few requests per second never waits this long. */
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_FAILURE_KINDS = 10;

/** The REST reads of the mix, in the order each client cycles through them. */
export function restPaths(environmentId: string): string[] {
  const env = `/api/v1/environments/${environmentId}`;
  return ["/api/v1/me", env, `${env}/mcp-connections`, `${env}/problems`];
}

export const emptyTally = (): Tally => ({ ok: 0, client: 0, server: 0, failed: 0 });

export function startSoakLoad(opts: SoakLoadOptions): SoakLoad {
  const pools = opts.bases.map(
    (base) =>
      new Pool(base, {
        connections: opts.restClients + opts.exporters,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        keepAliveMaxTimeout: 60_000,
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS,
      }),
  );
  const counts: InstanceCounts[] = opts.bases.map(() => ({
    rest: emptyTally(),
    otlp: emptyTally(),
    spans: 0,
  }));
  const failures = new Map<string, number>();
  const noteFailure = (what: string) => {
    if (failures.has(what) || failures.size < MAX_FAILURE_KINDS)
      failures.set(what, (failures.get(what) ?? 0) + 1);
  };
  const paths = restPaths(opts.environmentId);
  const restHeaders = { authorization: `Bearer ${opts.apiKey}` };
  const otlpHeaders = {
    authorization: `Bearer ${opts.publishableKey}`,
    "content-type": "application/x-protobuf",
  };

  /** Sends one request to instance `i` and counts its outcome; resolves true on a 2xx. */
  async function send(
    i: number,
    kind: "rest" | "otlp",
    request: { path: string; method: "GET" | "POST"; headers: Record<string, string>; body?: Uint8Array },
  ): Promise<boolean> {
    const pool = pools[i];
    const count = counts[i];
    if (!pool || !count) throw new Error(`no instance ${i}`);
    const tally = count[kind];
    try {
      const res = await pool.request(request);
      const text = await res.body.text();
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        tally.ok += 1;
        return true;
      }
      if (status >= 400 && status < 500) tally.client += 1;
      else if (status >= 500 && status < 600) tally.server += 1;
      else tally.failed += 1;
      noteFailure(`${kind} ${request.method} ${request.path}: HTTP ${status} ${text.slice(0, 160)}`);
    } catch (error) {
      tally.failed += 1;
      noteFailure(
        `${kind} ${request.method} ${request.path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return false;
  }

  const restClient = (k: number) =>
    paced(opts.restRate, opts.signal, async (n) => {
      // Instance and path both rotate, so each instance gets every path in turn.
      const j = k + n;
      const path = paths[Math.floor(j / opts.bases.length) % paths.length] ?? "/api/v1/me";
      await send(j % opts.bases.length, "rest", { path, method: "GET", headers: restHeaders });
    });

  const exporter = (k: number) => {
    // One template per exporter, as each would be its own service; `fresh()` gives new ids per post.
    const batch = traceBatch({ spans: opts.spansPerExport, service: `soak-${k + 1}` });
    return paced(opts.exportRate, opts.signal, async (n) => {
      const i = (k + n) % opts.bases.length;
      const accepted = await send(i, "otlp", {
        path: "/v1/traces",
        method: "POST",
        headers: otlpHeaders,
        body: batch.fresh(),
      });
      const count = counts[i];
      if (accepted && count) count.spans += batch.spans;
    });
  };

  const clients = [
    ...Array.from({ length: opts.restClients }, (_, k) => restClient(k)),
    ...Array.from({ length: opts.exporters }, (_, k) => exporter(k)),
  ];
  const done = Promise.all(clients).then(async () => {
    await Promise.all(pools.map((pool) => pool.close().catch(() => {})));
  });
  return { counts, failures, done };
}

/**
 * Calls `fn` `ratePerSecond` times a second, one call at a time, until `signal` aborts. Clients
 * start at a random phase so that they do not all fire in the same millisecond.
 */
async function paced(ratePerSecond: number, signal: AbortSignal, fn: (n: number) => Promise<void>) {
  const interval = 1000 / ratePerSecond;
  let next = performance.now() + Math.random() * interval;
  for (let n = 0; ; n++) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => {});
    if (signal.aborted) return;
    await fn(n);
    next = Math.max(next + interval, performance.now());
  }
}
