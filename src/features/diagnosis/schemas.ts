import { z } from "@hono/zod-openapi";
import { serviceHealthWindows } from "../telemetry/index.ts";

export const DiagnoseInputSchema = z
  .object({
    description: z
      .string()
      .trim()
      .min(3)
      .max(4000)
      .describe(
        "What is going wrong, in words: symptoms, routes, error messages, services (e.g. `checkout returns 500 on GET /orders/:id since the deploy`)",
      ),
    service: z.string().min(1).max(256).optional().describe("Only this service"),
    window: z
      .enum(serviceHealthWindows)
      .default("24h")
      .describe("How far back to look for evidence, up to now"),
    environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
  })
  .strict();
export type DiagnoseInput = z.infer<typeof DiagnoseInputSchema>;

const ProblemEvidenceSchema = z.object({
  id: z.string(),
  title: z.string(),
  culprit: z.string(),
  service: z.string(),
  status: z.string(),
  count: z.number().int(),
  lastSeen: z.string(),
  remediationId: z.string().nullable(),
  remediationState: z.string().nullable(),
  matched: z.array(z.string()).describe("Terms of the description this problem matched"),
});

const LogEvidenceSchema = z.object({
  time: z.string(),
  service: z.string(),
  severity: z.string(),
  body: z.string().nullable().describe("At most 500 characters"),
  traceId: z.string().nullable(),
  matched: z.array(z.string()),
});

const ServiceEvidenceSchema = z.object({
  service: z.string(),
  requestCount: z.number().int(),
  errorCount: z.number().int(),
  errorRate: z.number().nullable(),
  p95Ms: z.number().nullable(),
});

export const DiagnosisSchema = z.object({
  summary: z.string().describe("What the evidence points at, in one or two sentences"),
  confidence: z
    .enum(["high", "medium", "low", "none"])
    .describe("How well the description matches the evidence: `none` when nothing matched"),
  terms: z.array(z.string()).describe("The description's searchable terms"),
  window: z.enum(serviceHealthWindows),
  evidence: z.object({
    problems: z.array(ProblemEvidenceSchema).describe("Best matches first, at most 3"),
    logs: z.array(LogEvidenceSchema).describe("Matching error logs of the window, newest first, at most 5"),
    services: z
      .array(ServiceEvidenceSchema)
      .describe("Services with errors in the window, highest error rate first, at most 3"),
  }),
});
export type Diagnosis = z.infer<typeof DiagnosisSchema>;
