import { z } from "@hono/zod-openapi";
import {
  remediationKinds,
  remediationStatuses,
  verificationStates,
  watchStates,
} from "../../platform/db/schema/remediations.ts";
import { EnvironmentParams } from "../environments/index.ts";
import { BudgetsSchema, iso } from "../tasks/index.ts";

const RemediationBudgetsSchema = BudgetsSchema.openapi("RemediationBudgets");

export const DEFAULT_REMEDIATION_BUDGETS = {
  maxSteps: 30,
  maxTokens: 400_000,
  maxDurationMs: 20 * 60 * 1000,
};

export const RemediationEventSchema = z
  .object({
    at: iso,
    type: z.string(),
    status: z.enum(remediationStatuses).nullable(),
    message: z.string(),
    data: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("RemediationEvent");

const VerificationRunSchema = z
  .object({
    command: z.string(),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number().int(),
    output: z.string().openapi({ description: "The lines of the output that say what failed (bounded)." }),
  })
  .openapi("VerificationRun");

const VerificationSchema = z
  .object({
    state: z.enum(verificationStates),
    reason: z
      .string()
      .nullable()
      .openapi({ description: "Why there is no reproduction, or why the fix does not hold." }),
    reproduction: z
      .object({
        tests: z.array(z.string()),
        name: z.string().nullable(),
        matched: z.string().nullable().openapi({ description: "What in the failure matched the problem." }),
        testDiff: z.string().openapi({ description: "The unified diff of the test file(s)." }),
      })
      .nullable(),
    baseRun: VerificationRunSchema.nullable().openapi({
      description: "The reproduction on the default branch (base commit plus only the test files).",
    }),
    branchRun: VerificationRunSchema.nullable().openapi({
      description: "The reproduction on the fix branch.",
    }),
    suiteRun: VerificationRunSchema.nullable().openapi({
      description: "The repository's whole test command on the fix branch.",
    }),
    verifiedAt: iso,
  })
  .openapi("RemediationVerification");

const WatchSchema = z
  .object({
    state: z.enum(watchStates),
    mergedAt: iso,
    versionsAtMerge: z.array(z.string()),
    occurrences: z.array(
      z.object({ at: iso, traceId: z.string(), spanId: z.string(), serviceVersion: z.string().nullable() }),
    ),
    decidedAt: iso.nullable(),
    evidence: z.string().nullable(),
    traffic: z
      .object({
        spans: z.number().int(),
        firstAt: iso.nullable(),
        lastAt: iso.nullable(),
        versions: z.array(z.string()),
      })
      .nullable(),
  })
  .openapi("RemediationWatch");

export const RemediationSchema = z
  .object({
    id: z.string(),
    remediationId: z.string().openapi({ description: "Same as `id` (the name the agent routes use)." }),
    environmentId: z.uuid(),
    kind: z.enum(remediationKinds).openapi({
      description: "`fix`: a problem's remediation; `instrumentation`: OpenTelemetry added to a service.",
    }),
    problemId: z.string().nullable().openapi({ description: "The problem a `fix` fixes; null otherwise." }),
    service: z.string().nullable(),
    status: z.enum(remediationStatuses),
    threadUrl: z.url().openapi({ description: "The run's page in the web UI." }),
    prUrl: z
      .url()
      .nullable()
      .openapi({ description: "The pull request (or local review page) once opened." }),
    reasonCode: z.string().nullable().openapi({ description: "Set when `failed`: a stable code." }),
    reason: z.string().nullable(),
    approval: z
      .object({
        kind: z.enum(["repository_access", "high_risk_change"]),
        message: z.string(),
        approvalUrl: z.url(),
        requestedAt: iso,
      })
      .nullable()
      .openapi({ description: "While `awaiting-approval`: what a human must do, and where." }),
    repositoryId: z.string().nullable(),
    requestedRepository: z.string().nullable().openapi({
      description:
        "The repository the requester named (`owner/name` or `rep_…`): the run works there once it is registered in the environment. Null: the repository mapped to the run's service.",
    }),
    branch: z.string().nullable(),
    baseCommit: z.string().nullable(),
    headCommit: z.string().nullable(),
    change: z
      .object({
        summary: z.string(),
        files: z.array(z.string()),
        risk: z.object({ high: z.boolean(), reasons: z.array(z.string()) }),
      })
      .nullable(),
    validation: z
      .object({
        exitCode: z.number().int().nullable(),
        timedOut: z.boolean(),
        outputTail: z.string(),
        durationMs: z.number().int(),
      })
      .nullable(),
    verification: VerificationSchema.nullable().openapi({
      description:
        "How sure the run is of its fix, established by patchbay in the sandbox (a `fix` run, once validated): `reproduced-and-fixed`, `fixed-without-reproduction` (with the reason) or `not-fixed`. Null before validation and for instrumentation runs.",
    }),
    watch: WatchSchema.nullable().openapi({
      description:
        "After a fix is merged: the problem watched. `regressed` (regressed after merge, with the new occurrences) or `fixed` (the service's traffic stayed clear of it over the quiet window).",
    }),
    taskId: z.string().nullable(),
    budgets: RemediationBudgetsSchema,
    requestedBy: z.string(),
    events: z
      .array(RemediationEventSchema)
      .openapi({ description: "Progress, oldest first (the latest 200)." }),
    createdAt: iso,
    updatedAt: iso,
    finishedAt: iso.nullable(),
  })
  .openapi("Remediation");
export type Remediation = z.infer<typeof RemediationSchema>;

/** Who a thread message comes from: the task agent, a person (an approval, a merge), or patchbay. */
export const threadAuthors = ["agent", "person", "patchbay"] as const;

/**
 * A run as a thread an agent can read (`GET /x402/remediations/{id}/thread`): its progress events
 * as messages, oldest first, from a cursor on. The web page at `threadUrl` shows the same to people.
 */
export const RemediationThreadSchema = z.object({
  remediationId: z.string(),
  status: z.enum(remediationStatuses),
  threadUrl: z.url().describe("The same thread as a web page, for a signed-in member"),
  prUrl: z.url().nullable(),
  messages: z.array(
    z.object({
      id: z.number().int().describe("Pass the last one as `after` to read only newer messages"),
      at: iso,
      from: z.enum(threadAuthors),
      type: z.string().describe("created, status, agent_step, change_proposed, approval_requested, …"),
      status: z.enum(remediationStatuses).nullable().describe("The status the run moved to, if it moved"),
      text: z.string(),
      data: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),
  hasMore: z.boolean().describe("More messages follow the last one: read again with `after`"),
});
export type RemediationThread = z.infer<typeof RemediationThreadSchema>;

export const RemediationThreadQuerySchema = z
  .object({
    after: z.coerce
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Messages after this id (default: from the first)"),
    limit: z.coerce.number().int().min(1).max(200).optional().describe("At most this many (default 100)"),
  })
  .strict();

export const RemediationSummarySchema = RemediationSchema.omit({ events: true }).openapi(
  "RemediationSummary",
);
export type RemediationSummary = z.infer<typeof RemediationSummarySchema>;

export const CreateRemediationBody = z
  .object({ budgets: RemediationBudgetsSchema.partial().optional() })
  .strict()
  .openapi("CreateRemediation");

export const ProblemParams = EnvironmentParams.extend({
  problemId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "problemId", in: "path" }, example: "prb_5t7v9x1z3b5d7f9h1k3m5p7r" }),
});

export const RemediationParams = EnvironmentParams.extend({
  remediationId: z
    .string()
    .max(64)
    .openapi({ param: { name: "remediationId", in: "path" }, example: "rem_2e1y0zqtv97tr8rz3w838kpb" }),
});

export const ProposedChangeSchema = z
  .object({
    remediationId: z.string(),
    status: z.enum(remediationStatuses),
    summary: z.string(),
    files: z.array(z.object({ path: z.string(), deleted: z.boolean() })),
    diff: z.string().openapi({ description: "Unified diff against the base commit (bounded)." }),
    risk: z.object({
      high: z.boolean(),
      reasons: z
        .array(z.string())
        .openapi({ description: "Why the change needs an owner's or admin's approval." }),
    }),
  })
  .openapi("ProposedChange", {
    description: "The change the agent proposed, readable before any commit exists (what an approver reads).",
  });
export type ProposedChange = z.infer<typeof ProposedChangeSchema>;

export const RemediationReviewSchema = z
  .object({
    remediationId: z.string(),
    status: z.enum(remediationStatuses),
    provider: z.enum(["local-git", "github"]),
    repository: z.string(),
    baseBranch: z.string(),
    baseCommit: z.string(),
    branch: z.string(),
    headCommit: z.string(),
    prUrl: z.url().nullable(),
    summary: z.string(),
    files: z.array(z.string()),
    diff: z.string(),
    validation: RemediationSchema.shape.validation,
    verification: RemediationSchema.shape.verification,
    mergeSteps: z.array(z.string()).openapi({ description: "How a human merges it; patchbay never does." }),
  })
  .openapi("RemediationReview");
export type RemediationReview = z.infer<typeof RemediationReviewSchema>;
