import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import protojson from "protobufjs/ext/protojson.js";
import { AppError } from "../../errors.ts";
import {
  type IngestPrincipal,
  resolvePublishableKey,
} from "../../features/publishable-keys/resolve-publishable-key.ts";
import type { OtlpFormat } from "../../features/telemetry/decode-export.ts";
import { ingest } from "../../features/telemetry/ingest.ts";
import { OTLP_LIMITS } from "../../features/telemetry/limits.ts";
import { otlpMessages, rpcMessages, type Signal, signals } from "../../features/telemetry/otlp-schema.ts";
import { readOtlpBody } from "../../features/telemetry/read-body.ts";
import type { IngestPipeline } from "../../features/telemetry/telemetry-runtime.ts";
import { asKnownError } from "../../platform/db/errors.ts";
import { closesConnection } from "../http/connection-close.ts";
import type { AppEnv } from "../http/env.ts";

/**
 * OTLP/HTTP receiver, mounted at /v1 outside the /api/v1 authentication: these routes take a
 * publishable key, not an API key. CORS is open (no credentials) because publishable keys are
 * made for browsers and other shipped code.
 */
export function createOtlpRouter(runtime: IngestPipeline): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.use(
    "*",
    cors({
      origin: "*",
      allowMethods: ["POST"],
      allowHeaders: ["content-type", "content-encoding", "authorization", "x-patchbay-key"],
      exposeHeaders: ["retry-after", "x-request-id"],
      maxAge: 600,
    }),
  );
  for (const signal of signals) {
    router.post(`/${signal}`, exportHandler(signal, runtime));
    router.all(`/${signal}`, (c) =>
      statusResponse(formatOf(c.req.header("content-type")) ?? "json", 405, "Use POST.", { allow: "POST" }),
    );
  }
  return router;
}

/** Seconds an exporter should wait when the write queue is full. */
const SATURATED_RETRY_AFTER_SECONDS = 1;

function formatOf(contentType: string | undefined): OtlpFormat | undefined {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-protobuf" || type === "application/protobuf") return "protobuf";
  if (type === "application/json") return "json";
  return undefined;
}

/**
 * POST /v1/{traces,logs,metrics}. Order: key (401) → content type (415) → admission (503) →
 * body within limits (413) → decode (400; for traces on a conversion thread) → store → 200 with
 * partial success when items were refused. Every error is a `google.rpc.Status` in the request's
 * format (JSON when the format is not one we speak), never problem+json: OTLP exporters read
 * Status bodies.
 */
const exportHandler =
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

const contentTypes: Record<OtlpFormat, string> = {
  protobuf: "application/x-protobuf",
  json: "application/json",
};

/** gRPC status codes for the `google.rpc.Status` body, by HTTP status. */
const grpcCodes: Record<number, number> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  413: 3, // INVALID_ARGUMENT: the same request will never fit
  415: 3,
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  503: 14, // UNAVAILABLE
};

function encode(
  type: (typeof otlpMessages)[Signal]["response"],
  format: OtlpFormat,
  fields: Record<string, unknown>,
): Uint8Array<ArrayBuffer> | string {
  const message = type.fromObject(fields);
  if (format === "json") return JSON.stringify(protojson.toJson(type, message));
  return new Uint8Array(type.encode(message).finish());
}

/**
 * The success answer, in the request's format. `partialSuccess` is set only when something was
 * rejected: the specification asks that a full success leave it unset.
 */
function exportResponse(signal: Signal, format: OtlpFormat, rejected: { count: number; message: string }) {
  const { response, rejectedField } = otlpMessages[signal];
  const fields =
    rejected.count > 0
      ? { partialSuccess: { [rejectedField]: rejected.count, errorMessage: rejected.message } }
      : {};
  return new Response(encode(response, format, fields), {
    status: 200,
    headers: { "content-type": contentTypes[format] },
  });
}

/** An error answer: a `google.rpc.Status` in the request's format (JSON when it had none we speak). */
function statusResponse(
  format: OtlpFormat,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const body = encode(rpcMessages.status, format, { code: grpcCodes[status] ?? 2, message });
  return new Response(body, { status, headers: { "content-type": contentTypes[format], ...headers } });
}
