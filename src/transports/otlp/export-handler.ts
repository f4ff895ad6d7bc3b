import type { Context } from "hono";
import { AppError } from "../../errors.ts";
import {
  type IngestPrincipal,
  resolvePublishableKey,
} from "../../features/publishable-keys/resolve-publishable-key.ts";
import type { OtlpFormat } from "../../features/telemetry/decode-export.ts";
import { ingestLogs } from "../../features/telemetry/ingest-logs.ts";
import { ingestMetrics } from "../../features/telemetry/ingest-metrics.ts";
import type { IngestArgs } from "../../features/telemetry/ingest-result.ts";
import { ingestTraces } from "../../features/telemetry/ingest-traces.ts";
import { OTLP_LIMITS } from "../../features/telemetry/limits.ts";
import { exportResponse, statusResponse } from "../../features/telemetry/otlp-response.ts";
import type { Signal } from "../../features/telemetry/otlp-schema.ts";
import { readOtlpBody } from "../../features/telemetry/read-body.ts";
import type { IngestResult } from "../../features/telemetry/rejections.ts";
import type { IngestPipeline } from "../../features/telemetry/telemetry-runtime.ts";
import { asKnownError } from "../../platform/db/errors.ts";
import { closesConnection } from "../http/connection-close.ts";
import type { AppEnv } from "../http/env.ts";

const ingest: Record<Signal, (args: IngestArgs) => Promise<IngestResult>> = {
  traces: ingestTraces,
  logs: ingestLogs,
  metrics: ingestMetrics,
};

/** Seconds an exporter should wait when the write queue is full. */
const SATURATED_RETRY_AFTER_SECONDS = 1;

export function formatOf(contentType: string | undefined): OtlpFormat | undefined {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-protobuf" || type === "application/protobuf") return "protobuf";
  if (type === "application/json") return "json";
  return undefined;
}

/**
 * POST /v1/{traces,logs,metrics}. Order: key (401) → content type (415) → admission (503) →
 * body within limits (413) → decode (400; for traces on a conversion thread) → store → 200 with
 * partial success when items were refused. Every error is a `google.rpc.Status` in the request's format (JSON when the format is
 * not one we speak), never problem+json: OTLP exporters read Status bodies.
 */
export const exportHandler =
  (signal: Signal, runtime: IngestPipeline) =>
  async (c: Context<AppEnv>): Promise<Response> => {
    const format = formatOf(c.req.header("content-type"));
    try {
      const principal = await authenticateIngest(c);
      if (!format) {
        throw new AppError(
          "unsupported_media_type",
          "Send OTLP as application/x-protobuf or application/json.",
        );
      }
      const admission = runtime.queue.admit();
      // Refused before the body is read: `overloaded` also closes the connection (connection-close.ts).
      if (!admission) throw saturated("overloaded");
      try {
        const body = await readOtlpBody(c.req.raw, OTLP_LIMITS);
        if (!admission.reserve(body.byteLength)) throw saturated("service_unavailable");
        // Conversion runs first; only the storage write waits for one of the writers.
        const result = await ingest[signal]({
          deps: c.get("deps"),
          store: runtime.store,
          conversion: runtime.conversion,
          principal,
          format,
          body,
          writer: (write) => admission.run(write),
        });
        return exportResponse(signal, format, result.rejected);
      } finally {
        admission.release();
      }
    } catch (error) {
      return errorResponse(c, format ?? "json", error);
    }
  };

const saturated = (code: "overloaded" | "service_unavailable") =>
  new AppError(code, "Telemetry ingest is saturated; retry shortly.", {
    retryAfterSeconds: SATURATED_RETRY_AFTER_SECONDS,
  });

/** The publishable key from `Authorization: Bearer pk_…` or `x-patchbay-key: pk_…`. */
async function authenticateIngest(c: Context<AppEnv>): Promise<IngestPrincipal> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
  const key = [bearer, c.req.header("x-patchbay-key")?.trim()].find((k) => k?.startsWith("pk_"));
  if (!key) {
    throw new AppError(
      "unauthorized",
      "Send a publishable key as Authorization: Bearer pk_… or x-patchbay-key: pk_… (create one under /api/v1/environments/{environmentId}/publishable-keys).",
    );
  }
  const principal = await resolvePublishableKey(c.get("deps"), key);
  if (!principal) throw new AppError("unauthorized", "The publishable key is unknown or revoked.");
  return principal;
}

function errorResponse(c: Context<AppEnv>, format: OtlpFormat, thrown: unknown): Response {
  const error = asKnownError(thrown);
  if (error) {
    const headers: Record<string, string> = {};
    const retryAfter = error.details?.retryAfterSeconds;
    if (typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
    if (closesConnection(error.code, c.req.raw)) headers.connection = "close";
    if (error.code === "unauthorized") headers["www-authenticate"] = 'Bearer realm="patchbay"';
    return statusResponse(format, error.status, error.message, headers);
  }
  const requestId = c.get("requestId");
  c.get("deps").logger.error({ err: thrown, requestId }, "unhandled error in OTLP ingest");
  return statusResponse(format, 500, `An internal error occurred; quote request id ${requestId} to support.`);
}
