import { requirePermission } from "../../../context.ts";
import { callerEnvironment } from "../../environments/index.ts";
import { ms, windowEndingNow } from "./get-service-health.ts";
import type { EnvironmentRead, ServiceHealthWindow } from "./schemas.ts";

/** Buckets per window: fine enough to see a spike, coarse enough for percentiles to mean something. */
export const SERIES_BUCKETS = 30;

export type ServicePoint = {
  /** Start of the bucket, ISO 8601. */
  start: string;
  requests: number;
  errors: number;
  /** Errors over requests, 0–1. */
  errorRate: number;
  latencyMs: { p50: number; p95: number; p99: number };
};

export type ServiceSeries = {
  window: ServiceHealthWindow;
  from: string;
  to: string;
  bucketSeconds: number;
  /** Per service asked for, its buckets with entry spans (empty buckets are absent). */
  services: { service: string; points: ServicePoint[] }[];
};

/**
 * Service health over time for the charts: requests, errors and p50/p95/p99 latency of the
 * entry spans of each named service, in `SERIES_BUCKETS` buckets of the window ending now. The
 * same window, definition of a request and tenancy as `getServiceHealth`.
 */
export async function getServiceSeries({
  ctx,
  input,
}: EnvironmentRead<{ window: ServiceHealthWindow; services: readonly string[] }>): Promise<ServiceSeries> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const { span, from, to } = windowEndingNow(ctx, input.window);
  const bucketSeconds = span / SERIES_BUCKETS / 1000;
  const rows = await ctx.deps.telemetry.store.serviceSeries(environmentId, {
    services: input.services,
    from,
    to,
    bucketSeconds,
  });
  return {
    window: input.window,
    from,
    to,
    bucketSeconds,
    services: input.services.map((service) => ({
      service,
      points: rows
        .filter((r) => r.serviceName === service)
        .map((r) => ({
          start: r.bucket,
          requests: r.requests,
          errors: r.errors,
          errorRate: r.requests > 0 ? r.errors / r.requests : 0,
          latencyMs: { p50: ms(r.p50Ns), p95: ms(r.p95Ns), p99: ms(r.p99Ns) },
        })),
    })),
  };
}
