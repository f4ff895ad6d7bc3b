import { sql } from "drizzle-orm";
import { bigserial, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";

export const taskStatuses = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type TaskStatus = (typeof taskStatuses)[number];

/** One tool the task may call, as frozen at task start. Never an endpoint, credential or client. */
export type SnapshotTool = {
  /** Unique within the task; `[A-Za-z0-9_-]{1,64}` so every major model API accepts it. */
  modelName: string;
  connectionId: string;
  toolName: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | undefined;
  annotations?: Record<string, unknown> | undefined;
  /**
   * `read`: the agent may call it on its own; `write`: every call waits for a person. Absent in
   * snapshots taken before access classes existed, which count as `write` (fail closed).
   */
  access?: "read" | "write" | undefined;
};

export type SnapshotConnection = {
  connectionId: string;
  alias: string;
  revision: number;
  manifestHash: string;
};

export type TaskSnapshot = { takenAt: string; connections: SnapshotConnection[]; tools: SnapshotTool[] };

/** What a task's view shows of its snapshot: each tool's names and description, no schemas. */
export type TaskSnapshotView = {
  takenAt: string;
  connections: SnapshotConnection[];
  tools: Pick<SnapshotTool, "modelName" | "connectionId" | "toolName" | "description">[];
};

export type TaskBudgets = { maxSteps: number; maxTokens: number; maxDurationMs: number };
export type TaskUsage = { steps: number; inputTokens: number; outputTokens: number };

/** A transcript entry: what the model said and what each tool returned, in order. */
export type TranscriptEntry =
  | { type: "user"; text: string }
  | { type: "assistant"; text: string }
  | { type: "tool_call"; callId: string; tool: string; input: unknown }
  | { type: "tool_result"; callId: string; tool: string; outcome: string; output: unknown };

export type AwaitingCallApproval = {
  callApprovalId: string;
  connectionId: string;
  toolName: string;
  expiresAt: string;
};

export const tasks = pgTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    kind: text("kind").notNull().default("agent"),
    instructions: text("instructions").notNull(),
    status: text("status", { enum: taskStatuses }).notNull().default("queued"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    summary: text("summary"),
    /** Written once at creation, never rewritten (task rule 1). */
    snapshot: jsonb("snapshot").$type<TaskSnapshot>().notNull(),
    /**
     * `snapshot` as a task's view shows it, kept by PostgreSQL (a stored generated column; the
     * function is migration 0025's): the snapshot never changes, and a page of 50 tasks read
     * whole snapshots, tools' schemas included, to show their names.
     */
    snapshotView: jsonb("snapshot_view")
      .$type<TaskSnapshotView>()
      .notNull()
      .generatedAlwaysAs(sql`task_snapshot_view(snapshot)`),
    budgets: jsonb("budgets").$type<TaskBudgets>().notNull(),
    usage: jsonb("usage").$type<TaskUsage>().notNull(),
    transcript: jsonb("transcript").$type<TranscriptEntry[]>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: millis("created_at").notNull(),
    startedAt: millis("started_at"),
    finishedAt: millis("finished_at"),
    cancelRequestedAt: millis("cancel_requested_at"),
    /** Set while the agent waits for a person to approve a `write` call (task_call_approvals). */
    awaitingCallApproval: jsonb("awaiting_call_approval").$type<AwaitingCallApproval>(),
  },
  (t) => [
    index("tasks_env_page_idx").on(t.environmentId, t.createdAt, t.id),
    index("tasks_status_idx").on(t.status),
  ],
);

export const toolCallOutcomes = ["ok", "error", "refused", "ambiguous"] as const;
export type ToolCallOutcome = (typeof toolCallOutcomes)[number];

/** The call record: one row per attempted tool call, never arguments' secrets or credentials. */
export const taskToolCalls = pgTable(
  "task_tool_calls",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    modelToolName: text("model_tool_name").notNull(),
    connectionId: text("connection_id"),
    connectionRevision: integer("connection_revision"),
    toolName: text("tool_name").notNull(),
    startedAt: millis("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    outcome: text("outcome", { enum: toolCallOutcomes }).notNull(),
    errorCode: text("error_code"),
    /** A `write` call: the approval that let it through, and who gave it. */
    callApprovalId: text("call_approval_id"),
    approvedBy: text("approved_by"),
  },
  (t) => [index("task_tool_calls_task_idx").on(t.taskId, t.id)],
);

/**
 * Per task and connection: the result of the first-use manifest comparison. Once drift is seen,
 * every later call of that task to that connection is refused with `manifest_changed`.
 */
export const taskConnectionChecks = pgTable(
  "task_connection_checks",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    connectionId: text("connection_id").notNull(),
    result: text("result", { enum: ["match", "manifest_changed"] }).notNull(),
    checkedAt: millis("checked_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.connectionId] })],
);

export const callApprovalStates = ["pending", "approved", "rejected", "used"] as const;
export type CallApprovalState = (typeof callApprovalStates)[number];

/**
 * A `write` tool call the agent asked for, waiting for an owner or admin. Single use: bound to
 * the task, connection, revision, tool and the hash of the exact arguments; `expiresAt` passes
 * a pending one by (shown as `expired`, never stored). `approved` turns into `used` when the one
 * call it allows is made.
 */
export const taskCallApprovals = pgTable(
  "task_call_approvals",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    connectionId: text("connection_id").notNull(),
    connectionRevision: integer("connection_revision").notNull(),
    toolName: text("tool_name").notNull(),
    modelToolName: text("model_tool_name").notNull(),
    /** The exact arguments, shown to the person who decides. */
    arguments: jsonb("arguments").$type<Record<string, unknown>>().notNull(),
    argumentsHash: text("arguments_hash").notNull(),
    state: text("state", { enum: callApprovalStates }).notNull().default("pending"),
    requestedAt: millis("requested_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
    decidedBy: text("decided_by"),
    decidedAt: millis("decided_at"),
    usedAt: millis("used_at"),
  },
  (t) => [index("task_call_approvals_task_idx").on(t.taskId, t.requestedAt, t.id)],
);
