import { z } from "@hono/zod-openapi";
import { taskStatuses, toolCallOutcomes } from "../../platform/db/schema/tasks.ts";
import { EnvironmentParams } from "../environments/index.ts";

export const iso = z.iso.datetime();

/** The limits of an agent's run: a task's, and a remediation's (its agent is a task). */
export const BudgetsSchema = z.object({
  maxSteps: z.number().int().min(1).max(100),
  maxTokens: z.number().int().min(1_000).max(2_000_000),
  maxDurationMs: z
    .number()
    .int()
    .min(1_000)
    .max(60 * 60 * 1000),
});
const TaskBudgetsSchema = BudgetsSchema.openapi("TaskBudgets");

export const DEFAULT_BUDGETS = { maxSteps: 20, maxTokens: 200_000, maxDurationMs: 10 * 60 * 1000 };

export const TaskSchema = z
  .object({
    id: z.string(),
    environmentId: z.uuid(),
    kind: z.string(),
    instructions: z.string(),
    status: z.enum(taskStatuses),
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    summary: z.string().nullable(),
    snapshot: z.object({
      takenAt: iso,
      connections: z.array(
        z.object({
          connectionId: z.string(),
          alias: z.string(),
          revision: z.number().int(),
          manifestHash: z.string(),
        }),
      ),
      tools: z.array(
        z.object({
          modelName: z.string(),
          connectionId: z.string(),
          toolName: z.string(),
          description: z.string().optional(),
        }),
      ),
    }),
    budgets: TaskBudgetsSchema,
    usage: z.object({
      steps: z.number().int(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
    }),
    awaitingApproval: z
      .object({ callApprovalId: z.string(), connectionId: z.string(), toolName: z.string(), expiresAt: iso })
      .nullable()
      .openapi({
        description:
          "Set while the agent waits for an owner or admin to approve one of its write calls; `nextStep` says how.",
      }),
    nextStep: z.string().nullable().openapi({ description: "What a person should do now, when anything." }),
    createdAt: iso,
    startedAt: iso.nullable(),
    finishedAt: iso.nullable(),
  })
  .openapi("Task");
export type Task = z.infer<typeof TaskSchema>;

export const CreateTaskBody = z
  .object({
    instructions: z.string().trim().min(1).max(20_000),
    budgets: TaskBudgetsSchema.partial().optional(),
  })
  .strict()
  .openapi("CreateTask", { example: { instructions: "Find out why checkout latency rose at 14:00 UTC." } });

export const ToolCallSchema = z
  .object({
    id: z.number().int(),
    taskId: z.string(),
    modelToolName: z.string(),
    connectionId: z.string().nullable().openapi({
      description: "null for the runtime's own tools (`finish`, a remediation's built-in tools).",
    }),
    connectionRevision: z.number().int().nullable(),
    toolName: z.string(),
    startedAt: iso,
    durationMs: z.number().int().openapi({
      description: "0 while the call has not finished (see `outcome`).",
    }),
    outcome: z.enum(toolCallOutcomes).openapi({
      description:
        "`ambiguous`: the request was sent and its outcome is not known — written before the request leaves, and kept if the worker stopped mid-call or the call timed out after sending. Final once the task has ended.",
    }),
    errorCode: z.string().nullable(),
    callApprovalId: z
      .string()
      .nullable()
      .openapi({ description: "The approval a write call was made under." }),
    approvedBy: z
      .string()
      .nullable()
      .openapi({ description: "The owner or admin who approved a write call." }),
  })
  .openapi("ToolCall");

export const TranscriptSchema = z
  .object({ taskId: z.string(), entries: z.array(z.record(z.string(), z.unknown())) })
  .openapi("TaskTranscript");

export const TaskParams = EnvironmentParams.extend({
  taskId: z
    .string()
    .max(64)
    .openapi({ param: { name: "taskId", in: "path" } }),
});

export const callApprovalViewStates = ["pending", "approved", "rejected", "expired", "used"] as const;

export const CallApprovalSchema = z
  .object({
    id: z.string().openapi({ example: "cap_4f6h8k0m2p4r6t8v0x2z4b6d" }),
    taskId: z.string(),
    connectionId: z.string(),
    connectionRevision: z.number().int(),
    toolName: z.string(),
    modelToolName: z.string(),
    arguments: z.record(z.string(), z.unknown()).openapi({
      description: "The exact arguments the agent will send; the approval is bound to them.",
    }),
    state: z.enum(callApprovalViewStates).openapi({
      description:
        "`pending` until an owner or admin decides or it expires; `approved` lets exactly one call through, which makes it `used`.",
    }),
    requestedAt: iso,
    expiresAt: iso,
    decidedBy: z.string().nullable(),
    decidedAt: iso.nullable(),
    usedAt: iso.nullable(),
    url: z.string().nullable().openapi({
      description:
        "The web page where an owner or admin reviews and decides a pending approval; null once it is not pending.",
    }),
  })
  .openapi("TaskCallApproval");
export type CallApproval = z.infer<typeof CallApprovalSchema>;

export const CallApprovalParams = TaskParams.extend({
  callApprovalId: z
    .string()
    .max(64)
    .openapi({ param: { name: "callApprovalId", in: "path" } }),
});

export const CallDecisionBody = z
  .object({ decision: z.enum(["approve", "reject"]) })
  .strict()
  .openapi("TaskCallDecision");
