import { z } from "@hono/zod-openapi";
import { problemStatuses } from "../../../platform/db/schema/problems.ts";

import { PageQuery } from "../../../schemas.ts";
import { NextCursor } from "../queries/schemas.ts";

/**
 * Problems as the query verbs answer them: shared by the REST routes and the paid x402 routes
 * (also as x402 Bazaar input and output schemas). No environment id in the query: the route
 * supplies it.
 */

const iso = z.iso.datetime();

export const ProblemStatusSchema = z.enum(problemStatuses).openapi("ProblemStatus", {
  description:
    "`open` when first seen; `resolved` and `ignored` are set by people; a resolved problem seen again becomes `regressed`.",
});

export const ProblemListQuerySchema = z
  .object({
    status: ProblemStatusSchema.optional().openapi({ description: "Only problems in this status." }),
    service: z.string().min(1).max(256).optional().openapi({ description: "Only problems of this service." }),
    ...PageQuery.shape,
  })
  .openapi("ProblemListQuery");
export type ProblemListQueryInput = z.infer<typeof ProblemListQuerySchema>;

export const ProblemSummarySchema = z
  .object({
    id: z.string(),
    fingerprint: z.string().openapi({
      description: "sha256 over service, exception type and top in-app frames (or masked message).",
    }),
    title: z.string().openapi({ description: "`Type: message` with numbers, ids and hex masked." }),
    culprit: z.string().openapi({ description: "Where it happens: the top in-app frame, else the service." }),
    service: z.string(),
    exceptionType: z.string(),
    status: ProblemStatusSchema,
    count: z.number().int().openapi({
      description:
        "Occurrences seen: exception events, and error logs that are not evidence on their span's problem (see `logCount`).",
    }),
    firstSeen: iso,
    lastSeen: iso,
    revision: z.number().int().min(1).openapi({
      description: "Changes with every status change (send it quoted in If-Match to change the status).",
    }),
    remediationId: z.string().nullable().openapi({
      description: "The latest remediation run of this problem (`rem_…`); null while there is none.",
    }),
    remediationState: z
      .string()
      .nullable()
      .openapi({ description: "The latest remediation's status; null while there is none." }),
  })
  .openapi("ProblemSummary");
export type ProblemSummary = z.infer<typeof ProblemSummarySchema>;

export const ProblemPageSchema = z
  .object({
    items: z.array(ProblemSummarySchema).openapi({ description: "Most recently seen first." }),
    nextCursor: NextCursor,
  })
  .openapi("ProblemPage");
export type ProblemPage = z.infer<typeof ProblemPageSchema>;

export const StackFrameSchema = z
  .object({ function: z.string(), file: z.string(), inApp: z.boolean() })
  .openapi("StackFrame");

/**
 * A problem detected in telemetry, in full. Its OpenAPI component is `TelemetryProblem`, not
 * `Problem`: that name belongs to the RFC 9457 error body (`src/transports/http/openapi.ts`),
 * which RFC 9457 itself calls a "problem details" object and every error answer uses. One
 * name for both made the generator describe this answer as an error.
 */
export const TelemetryProblemSchema = ProblemSummarySchema.extend({
  sampleTraceIds: z.array(z.string()).openapi({
    description: "Traces of recent occurrences, newest first (at most 10): read them as traces.",
  }),
  sampleMessage: z.string().nullable().openapi({ description: "The latest occurrence's message, unmasked." }),
  stackTrace: z.string().nullable().openapi({ description: "The latest stack trace seen (raw)." }),
  logCount: z.number().int().openapi({
    description:
      "Error logs of the failing spans of its occurrences (same trace and span id): evidence on this problem, not counted in `count`.",
  }),
  sampleLogMessage: z
    .string()
    .nullable()
    .openapi({ description: "The latest such error log's message; null while there is none." }),
  frames: z
    .array(StackFrameSchema)
    .openapi({ description: "`stackTrace` parsed, most recent call first (V8, JVM and Python formats)." }),
  resolvedAt: iso.nullable(),
  statusChangedAt: iso.nullable(),
}).openapi("TelemetryProblem", {
  example: {
    id: "prb_3h5k7m9p1r3t5v7x9z1b3d5f",
    fingerprint: "sha256:9f2c…",
    title: "TypeError: Cannot read properties of undefined (reading 'sku') for order <n>",
    culprit: "priceLine (cart/price-line.ts)",
    service: "checkout",
    exceptionType: "TypeError",
    status: "open",
    count: 42,
    firstSeen: "2026-11-22T09:12:00.000Z",
    lastSeen: "2026-11-22T10:14:59.120Z",
    revision: 1,
    remediationId: null,
    remediationState: null,
    sampleTraceIds: ["4bf92f3577b34da6a3ce929d0e0e4736"],
    sampleMessage: "Cannot read properties of undefined (reading 'sku') for order 1041",
    stackTrace:
      "TypeError: Cannot read properties of undefined (reading 'sku')\n    at priceLine (/app/src/cart/price-line.ts:41:23)",
    logCount: 40,
    sampleLogMessage: "checkout failed",
    frames: [{ function: "priceLine", file: "/app/src/cart/price-line.ts", inApp: true }],
    resolvedAt: null,
    statusChangedAt: null,
  },
});
export type Problem = z.infer<typeof TelemetryProblemSchema>;

export const ProblemParams = z.object({
  problemId: z
    .string()
    .max(64)
    .openapi({ param: { name: "problemId", in: "path" }, example: "prb_3h5k7m9p1r3t5v7x9z1b3d5f" }),
});

export const UpdateProblemBody = z
  .object({
    status: z.enum(["open", "resolved", "ignored"]).openapi({
      description: "`regressed` is set by patchbay only, when a resolved problem is seen again.",
    }),
  })
  .strict()
  .openapi("UpdateProblem");
