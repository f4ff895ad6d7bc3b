import { requirePermission, type ServiceContext } from "../../../context.ts";
import { callerEnvironment } from "../../environments/index.ts";
import type {
  EnvironmentRead,
  ServiceHealthPage,
  ServiceHealthQueryInput,
  ServiceHealthWindow,
} from "./schemas.ts";
import { decodeCursor, encodeCursor } from "./telemetry-cursor.ts";

const MINUTE = 60_000;
export const windowMs: Record<ServiceHealthWindow, number> = {
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "1h": 60 * MINUTE,
  "6h": 360 * MINUTE,
  "24h": 1440 * MINUTE,
  "7d": 7 * 1440 * MINUTE,
};

/** Nanoseconds as milliseconds, to the microsecond. */
export const ms = (ns: number) => Math.round(ns / 1_000) / 1_000;

/** The window of that length ending now, as the store takes it. */
export function windowEndingNow(ctx: ServiceContext, window: ServiceHealthWindow) {
  const span = windowMs[window];
  const now = ctx.deps.clock();
  return { span, from: new Date(now.getTime() - span).toISOString(), to: now.toISOString() };
}

/**
 * Health of each service of an environment over the window ending now: request rate, error rate
 * and p50/p95/p99 latency of its entry spans (server and consumer spans, and trace roots), and
 * when it was last seen. Services come in name order, a page at a time; a service that sent
 * telemetry earlier but nothing in the window is listed with zero requests.
 */
export async function getServiceHealth({
  ctx,
  input,
}: EnvironmentRead<ServiceHealthQueryInput>): Promise<ServiceHealthPage> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const { span, from, to } = windowEndingNow(ctx, input.window);
  const after = decodeCursor(input.cursor, ([name]) => (typeof name === "string" ? name : undefined));
  const rows = await ctx.deps.telemetry.store.serviceHealth(environmentId, {
    from,
    to,
    after,
    limit: input.pageSize + 1,
  });
  const page = rows.slice(0, input.pageSize);
  const last = page.at(-1);
  return {
    window: input.window,
    from,
    to,
    items: page.map((row) => ({
      service: row.serviceName,
      lastSeen: row.lastSeen,
      requestCount: row.requests,
      requestRate: Math.round((row.requests / (span / 1000)) * 1000) / 1000,
      errorCount: row.errors,
      errorRate: row.requests > 0 ? Math.round((row.errors / row.requests) * 10_000) / 10_000 : null,
      latencyMs:
        row.p50Ns === null || row.p95Ns === null || row.p99Ns === null
          ? null
          : { p50: ms(row.p50Ns), p95: ms(row.p95Ns), p99: ms(row.p99Ns) },
    })),
    nextCursor: rows.length > input.pageSize && last ? encodeCursor([last.serviceName]) : null,
  };
}
