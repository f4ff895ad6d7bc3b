import { bigserial, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";
import { repositories } from "./repositories.ts";
import { tasks } from "./tasks.ts";

/** DESIGN §7. `awaiting-review` carries `prUrl`; `failed` carries a reason. */
export const remediationStatuses = [
  "queued",
  "investigating",
  "awaiting-approval",
  "coding",
  "validating",
  "opening-pr",
  "awaiting-review",
  "merged",
  "closed",
  "failed",
  "cancelled",
] as const;
export type RemediationStatus = (typeof remediationStatuses)[number];

/** No step ever runs again once a run is in one of these. */
export const terminalRemediationStatuses = ["merged", "closed", "failed", "cancelled"] as const;

export type ApprovalKind = "repository_access" | "high_risk_change";
export type RemediationApproval = {
  kind: ApprovalKind;
  requestedAt: string;
  message: string;
  grantedAt?: string;
  grantedBy?: string;
};

/** One file of the proposed change: its new content, or null when the agent deleted it. */
export type ChangedFile = { path: string; content: string | null };
/** The test(s) the agent names as reproducing the problem (its `finish` and `check_reproduction`). */
export type ReproductionClaim = { tests: string[]; name?: string | undefined };
export type RemediationChange = {
  summary: string;
  files: ChangedFile[];
  /** Unified diff against the base commit, bounded. */
  diff: string;
  risk: { high: boolean; reasons: string[] };
  /** The test(s) the agent named as reproducing the problem (its `finish`). */
  reproduction?: ReproductionClaim;
  /** Why the agent wrote no reproducing test (its `finish`). */
  noReproductionReason?: string;
};

export type TestRun = {
  exitCode: number | null;
  timedOut: boolean;
  outputTail: string;
  durationMs: number;
};

/** One recorded test run of a verification (bounded output: the lines that say what failed). */
export type VerificationRun = {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  output: string;
};

export const verificationStates = [
  "reproduced-and-fixed",
  "fixed-without-reproduction",
  "not-fixed",
] as const;
export type VerificationState = (typeof verificationStates)[number];

/**
 * How sure a run is of its fix, established by the run in the sandbox (never the model's word):
 * the reproducing test failing on the default branch (`baseRun`: base commit plus only the test
 * files), passing on the fix branch (`branchRun`), and the whole test command on the fix branch
 * (`suiteRun`).
 */
export type RemediationVerification = {
  state: VerificationState;
  /** Why there is no reproduction, or why the fix does not hold; null when reproduced and fixed. */
  reason: string | null;
  reproduction: {
    tests: string[];
    name: string | null;
    /** What in the base run's failure matched the problem. */
    matched: string | null;
    /** The unified diff of the test file(s) against the base. */
    testDiff: string;
  } | null;
  baseRun: VerificationRun | null;
  branchRun: VerificationRun | null;
  suiteRun: VerificationRun | null;
  verifiedAt: string;
};

export const watchStates = ["watching", "regressed", "fixed"] as const;
export type WatchState = (typeof watchStates)[number];

/** One occurrence of the problem's fingerprint after the merge. */
export type WatchOccurrence = {
  at: string;
  traceId: string;
  spanId: string;
  serviceVersion: string | null;
};

/**
 * The problem watched after the merge of a fix: `regressed` when its fingerprint occurs again
 * (from a newer `service.version`, or after the grace period when telemetry has no version),
 * `fixed` when the service kept sending traffic over the quiet window and it did not occur.
 */
export type RemediationWatch = {
  state: WatchState;
  mergedAt: string;
  /** `service.version`s the service reported up to the merge: an occurrence from these is the old code. */
  versionsAtMerge: string[];
  /** Occurrences that count against the fix (newest first, at most 10). */
  occurrences: WatchOccurrence[];
  /** When the state last changed, and the evidence for it in one sentence. */
  decidedAt: string | null;
  evidence: string | null;
  /** For `fixed`: the traffic seen over the window. */
  traffic: { spans: number; firstAt: string | null; lastAt: string | null; versions: string[] } | null;
};

/**
 * What a run is for: `fix` a problem, or add OpenTelemetry `instrumentation` to a service's
 * repository (`POST /x402/instrumentation/pr`). Both take the same steps to a pull request.
 */
export const remediationKinds = ["fix", "instrumentation"] as const;
export type RemediationKind = (typeof remediationKinds)[number];

export type RemediationBudgets = { maxSteps: number; maxTokens: number; maxDurationMs: number };

export const remediations = pgTable(
  "remediations",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    kind: text("kind", { enum: remediationKinds }).notNull().default("fix"),
    /** The problem a `fix` run fixes; null for `instrumentation` runs. */
    problemId: text("problem_id"),
    service: text("service"),
    repositoryId: text("repository_id").references(() => repositories.id, { onDelete: "set null" }),
    /**
     * The repository the requester named (`owner/name` or `rep_…`), kept as named: the run works
     * there once a human has registered it in the environment, instead of the service's mapping.
     */
    requestedRepository: text("requested_repository"),
    status: text("status", { enum: remediationStatuses }).notNull().default("queued"),
    /** Stable code of a `failed` run (`tests_failed`, `model_error`, `budget_exhausted`, …). */
    reasonCode: text("reason_code"),
    reason: text("reason"),
    approval: jsonb("approval").$type<RemediationApproval>(),
    /** `usr_…` for people, `wallet:<network>:<address>` for paying agents. */
    requestedBy: text("requested_by").notNull(),
    taskId: text("task_id").references(() => tasks.id, { onDelete: "set null" }),
    budgets: jsonb("budgets").$type<RemediationBudgets>().notNull(),
    branch: text("branch"),
    baseCommit: text("base_commit"),
    headCommit: text("head_commit"),
    change: jsonb("change").$type<RemediationChange>(),
    validation: jsonb("validation").$type<TestRun>(),
    verification: jsonb("verification").$type<RemediationVerification>(),
    watch: jsonb("watch").$type<RemediationWatch>(),
    prUrl: text("pr_url"),
    prNumber: integer("pr_number"),
    /** +1 on every transition that enqueues the next step; a job for another value is stale. */
    stepSeq: integer("step_seq").notNull().default(0),
    /** Fencing token: +1 whenever a worker takes the run; writes of an older holder are refused. */
    lease: integer("lease").notNull().default(0),
    cancelRequestedAt: millis("cancel_requested_at"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
    finishedAt: millis("finished_at"),
  },
  (t) => [
    index("remediations_env_page_idx").on(t.environmentId, t.createdAt, t.id),
    index("remediations_env_status_idx").on(t.environmentId, t.status),
    index("remediations_problem_idx").on(t.environmentId, t.problemId),
  ],
);

/** The run's progress, in order: every status change and every notable step, shown to people and agents. */
export const remediationEvents = pgTable(
  "remediation_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    remediationId: text("remediation_id")
      .notNull()
      .references(() => remediations.id, { onDelete: "cascade" }),
    at: millis("at").notNull(),
    type: text("type").notNull(),
    status: text("status", { enum: remediationStatuses }),
    message: text("message").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>(),
  },
  (t) => [index("remediation_events_run_idx").on(t.remediationId, t.id)],
);
