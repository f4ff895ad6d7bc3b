import { randomBytes, randomUUID } from "node:crypto";
import type postgres from "postgres";

/**
 * Steady traffic against the instances while a fault happens, recorded request by request:
 * OTLP trace exports (each a trace of its own; an exporter re-sends the same body after a 503 or
 * a failed request, as the OpenTelemetry SDK does), API-key reads, and idempotent REST writes
 * retried with the same Idempotency-Key until they are acknowledged.
 */

/** A request that takes longer than this is a hang: the service promises an answer within 5 s. */
export const HANG_BOUND_MS = 6_000;
/** The client gives up on a request after this long (and counts it as a hang). */
const CLIENT_TIMEOUT_MS = 20_000;

export type Kind = "ingest" | "read" | "write";
export type Outcome = { kind: Kind; status: number | "network"; ms: number; at: number; url: string };

export type Target = { baseUrl: string };
export type Credentials = { apiKey: string; publishableKey: string };

export type Traffic = {
  outcomes: Outcome[];
  /** Trace ids the service acknowledged (200). */
  ackedTraces: Set<string>;
  /** Environment names whose creation the service acknowledged (201, or a replay of it). */
  ackedWrites: Set<string>;
  stop(): Promise<void>;
};

const SPANS_PER_TRACE = 20;

function traceBody(traceId: string): string {
  const start = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: SPANS_PER_TRACE }, (_, i) => ({
    traceId,
    spanId: randomBytes(8).toString("hex"),
    name: i === 0 ? "GET /orders/:id" : `step ${i}`,
    kind: i === 0 ? 2 : 1,
    startTimeUnixNano: String(start + BigInt(i) * 1000n),
    endTimeUnixNano: String(start + BigInt(i) * 1000n + 500_000n),
    status: { code: 1 },
  }));
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "faults" } }] },
        scopeSpans: [{ scope: { name: "faults" }, spans }],
      },
    ],
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds from Retry-After, capped so the suite keeps probing. */
const retryDelayMs = (res: Response | undefined) =>
  Math.min(2_000, Number(res?.headers.get("retry-after") ?? "1") * 1000 || 1000);

export function startTraffic(
  targets: Target[],
  credentials: Credentials,
  opts: { ingestClients?: number; readClients?: number; writeClients?: number } = {},
): Traffic {
  const outcomes: Outcome[] = [];
  const ackedTraces = new Set<string>();
  const ackedWrites = new Set<string>();
  let running = true;
  let next = 0;
  const pick = () => targets[next++ % targets.length] as Target;

  const send = async (kind: Kind, url: string, init: RequestInit): Promise<Response | undefined> => {
    const at = Date.now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
      await res.clone().arrayBuffer();
      outcomes.push({ kind, status: res.status, ms: Date.now() - at, at, url });
      return res;
    } catch {
      outcomes.push({ kind, status: "network", ms: Date.now() - at, at, url });
      return undefined;
    }
  };

  const ingest = async () => {
    while (running) {
      const traceId = randomBytes(16).toString("hex");
      const body = traceBody(traceId);
      // Re-send the same body until it is acknowledged or refused as bad.
      while (running) {
        const res = await send("ingest", `${pick().baseUrl}/v1/traces`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${credentials.publishableKey}`,
          },
          body,
        });
        if (res?.status === 200) {
          ackedTraces.add(traceId);
          break;
        }
        if (res && res.status < 500 && res.status !== 429) break;
        await pause(retryDelayMs(res));
      }
      await pause(20);
    }
  };

  const read = async () => {
    while (running) {
      await send("read", `${pick().baseUrl}/api/v1/me`, {
        headers: { authorization: `Bearer ${credentials.apiKey}` },
      });
      await pause(50);
    }
  };

  const write = async () => {
    while (running) {
      const name = `fault-${randomUUID().slice(0, 8)}`;
      const key = randomUUID();
      // The same Idempotency-Key on every retry, on whichever instance: one environment at most.
      for (let attempt = 0; running || attempt === 0; attempt++) {
        const res = await send("write", `${pick().baseUrl}/api/v1/environments`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${credentials.apiKey}`,
            "idempotency-key": key,
          },
          body: JSON.stringify({ name }),
        });
        if (res?.status === 201) {
          ackedWrites.add(name);
          break;
        }
        if (res && res.status < 500 && res.status !== 409 && res.status !== 429) break;
        await pause(retryDelayMs(res));
      }
      await pause(200);
    }
  };

  const workers = [
    ...Array.from({ length: opts.ingestClients ?? 4 }, ingest),
    ...Array.from({ length: opts.readClients ?? 2 }, read),
    ...Array.from({ length: opts.writeClients ?? 1 }, write),
  ];
  return {
    outcomes,
    ackedTraces,
    ackedWrites,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** What the database holds of what was acknowledged. */
export async function storedOf(
  sql: postgres.Sql,
  environmentId: string,
  traffic: Traffic,
): Promise<{ traces: number; writes: number; duplicateWrites: number }> {
  const traceIds = [...traffic.ackedTraces];
  const names = [...traffic.ackedWrites];
  const [traces] = await sql<{ n: number }[]>`
    select count(distinct trace_id)::int as n from telemetry_trace_chunks
    where environment_id = ${environmentId} and trace_id = any(${traceIds})`;
  const rows = await sql<{ name: string; n: number }[]>`
    select name, count(*)::int as n from environments where name = any(${names}) group by name`;
  return {
    traces: traces?.n ?? 0,
    writes: rows.length,
    duplicateWrites: rows.filter((r) => r.n > 1).length,
  };
}

/** Requests by kind and status, e.g. { ingest: { "200": 812, "503": 40 } }. */
export function tally(outcomes: Outcome[]): Record<Kind, Record<string, number>> {
  const table: Record<Kind, Record<string, number>> = { ingest: {}, read: {}, write: {} };
  for (const { kind, status } of outcomes) {
    const row = table[kind];
    row[String(status)] = (row[String(status)] ?? 0) + 1;
  }
  return table;
}
