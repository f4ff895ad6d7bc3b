import { z } from "@hono/zod-openapi";
import { taskStatuses, toolCallOutcomes } from "../../platform/db/schema/tasks.ts";
import { EnvironmentParams } from "../environments/schemas.ts";

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
