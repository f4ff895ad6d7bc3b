import { z } from "@hono/zod-openapi";
import type { ServiceContext } from "../../../context.ts";

import { PageQuery } from "../../../schemas.ts";
import { severityNames } from "./severity.ts";

/**
 * Parameters and answers of the telemetry query verbs. Transport-neutral (no environment id: the
 * caller's route supplies it), so the REST routes and the paid x402 routes share them — also as
 * the x402 Bazaar input and output schemas.
 */

/**
 * A read verb's arguments. The input names the environment: a path parameter on REST, optional
 * for a paying wallet (its organisation's first by default).
 */
export type EnvironmentRead<I> = { ctx: ServiceContext; input: I & { environmentId?: string | undefined } };

const iso = z.iso.datetime({ offset: true });
const traceId = z
  .string()
  .regex(/^[0-9a-fA-F]{32}$/, "must be 32 hexadecimal characters")
  .transform((id) => id.toLowerCase());
const jsonObject = z.record(z.string(), z.unknown());

/** A page's cursor to the next one. */
export const NextCursor = z
  .string()
  .nullable()
  .openapi({ description: "Pass as `cursor` for the next page; null at the end." });

export const serviceHealthWindows = ["5m", "15m", "1h", "6h", "24h", "7d"] as const;
export type ServiceHealthWindow = (typeof serviceHealthWindows)[number];

export const ServiceHealthQuerySchema = z
  .object({
    window: z
      .enum(serviceHealthWindows)
      .default("1h")
      .openapi({ description: "How far back the figures reach, up to now.", example: "1h" }),
    ...PageQuery.shape,
  })
  .openapi("ServiceHealthQuery");
export type ServiceHealthQueryInput = z.infer<typeof ServiceHealthQuerySchema>;

export const ServiceHealthSchema = z
  .object({
    service: z.string().openapi({ description: "The resource's `service.name`." }),
    lastSeen: iso.openapi({ description: "The service's latest entry span or log record (any time)." }),
    requestCount: z.number().int().openapi({
      description: "Entry spans in the window: server and consumer spans, and trace roots.",
    }),
    requestRate: z.number().openapi({ description: "Entry spans per second over the window." }),
    errorCount: z.number().int().openapi({ description: "Entry spans with status ERROR." }),
    errorRate: z
      .number()
      .nullable()
      .openapi({ description: "errorCount / requestCount; null without requests." }),
    latencyMs: z
      .object({ p50: z.number(), p95: z.number(), p99: z.number() })
      .nullable()
      .openapi({ description: "Entry-span duration percentiles in milliseconds; null without requests." }),
  })
  .openapi("ServiceHealth", {
    example: {
      service: "checkout",
      lastSeen: "2026-11-22T10:14:59.120411Z",
      requestCount: 5400,
      requestRate: 1.5,
      errorCount: 27,
      errorRate: 0.005,
      latencyMs: { p50: 12.4, p95: 88.1, p99: 240.7 },
    },
  });
export type ServiceHealth = z.infer<typeof ServiceHealthSchema>;

export const ServiceHealthPageSchema = z
  .object({
    window: z.enum(serviceHealthWindows),
    from: iso,
    to: iso,
    items: z.array(ServiceHealthSchema),
    nextCursor: NextCursor,
  })
  .openapi("ServiceHealthPage");
export type ServiceHealthPage = z.infer<typeof ServiceHealthPageSchema>;

export const LogSearchQuerySchema = z
  .object({
    from: iso
      .optional()
      .openapi({ description: "Start of the time range (inclusive). Default: `to` − 1 hour." }),
    to: iso.optional().openapi({ description: "End of the time range (exclusive). Default: now." }),
    service: z.string().min(1).max(256).optional().openapi({ description: "Only this service." }),
    severity: z
      .enum(severityNames)
      .optional()
      .openapi({ description: "Minimum severity (OpenTelemetry severity ranges).", example: "warn" }),
    q: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: "Case-insensitive text the body contains.", example: "timeout" }),
    traceId: traceId.optional().openapi({ description: "Only records of this trace (32 hex characters)." }),
    ...PageQuery.shape,
  })
  .openapi("LogSearchQuery");
export type LogSearchQueryInput = z.infer<typeof LogSearchQuerySchema>;

export const LogRecordSchema = z
  .object({
    id: z.string(),
    time: iso,
    severity: z.enum(["unspecified", ...severityNames]),
    severityNumber: z.number().int().min(0).max(24),
    severityText: z.string().nullable(),
    body: z.string().nullable().openapi({ description: "Structured bodies as JSON text." }),
    service: z.string(),
    traceId: z.string().nullable(),
    spanId: z.string().nullable(),
    eventName: z.string().nullable(),
    scope: z.string().nullable().openapi({ description: "The instrumentation scope's name." }),
    attributes: jsonObject,
  })
  .openapi("LogRecord");
export type LogRecordView = z.infer<typeof LogRecordSchema>;

export const LogPageSchema = z
  .object({
    items: z.array(LogRecordSchema).openapi({ description: "Newest first." }),
    nextCursor: NextCursor,
  })
  .openapi("LogPage");
export type LogPage = z.infer<typeof LogPageSchema>;

export const TraceParamsSchema = z.object({
  traceId: traceId.openapi({
    param: { name: "traceId", in: "path" },
    description: "32 hexadecimal characters.",
    example: "4bf92f3577b34da6a3ce929d0e0e4736",
  }),
});

const spanKinds = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const;
export const spanKindName = (kind: number) => spanKinds[kind] ?? "unspecified";
const statusCodes = ["unset", "ok", "error"] as const;
export const statusName = (code: number) => statusCodes[code] ?? "unset";

export const TraceSpanSchema = z
  .object({
    spanId: z.string(),
    parentSpanId: z.string().nullable(),
    depth: z
      .number()
      .int()
      .min(0)
      .openapi({ description: "0 for roots (and spans whose parent was never stored)." }),
    service: z.string(),
    name: z.string(),
    kind: z.enum(spanKinds),
    startTime: iso,
    endTime: iso,
    durationMs: z.number(),
    status: z.object({ code: z.enum(statusCodes), message: z.string().nullable() }),
    scope: z.string().nullable(),
    attributes: jsonObject,
    resourceAttributes: jsonObject,
    events: z.array(
      z.object({ name: z.string(), time: iso.nullable(), attributes: jsonObject }).openapi("SpanEvent"),
    ),
    links: z.array(
      z.object({ traceId: z.string(), spanId: z.string(), attributes: jsonObject }).openapi("SpanLink"),
    ),
  })
  .openapi("TraceSpan");
export type TraceSpan = z.infer<typeof TraceSpanSchema>;

export const TraceSchema = z
  .object({
    traceId: z.string(),
    spanCount: z.number().int(),
    truncated: z
      .boolean()
      .openapi({ description: "True when the trace has more spans than one answer holds." }),
    startTime: iso,
    endTime: iso,
    durationMs: z.number(),
    services: z.array(z.string()),
    spans: z.array(TraceSpanSchema).openapi({
      description:
        "The span tree, depth first: each span follows its parent, siblings by start time; `depth` gives the nesting.",
    }),
  })
  .openapi("Trace");
export type Trace = z.infer<typeof TraceSchema>;
