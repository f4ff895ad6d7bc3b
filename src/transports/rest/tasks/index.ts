import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { decideCallApproval, listCallApprovals } from "../../../features/tasks/call-approvals.ts";
import { cancelTask } from "../../../features/tasks/cancel-task.ts";
import { createTask } from "../../../features/tasks/create-task.ts";
import { getTask, getTaskTranscript, listTasks, listToolCalls } from "../../../features/tasks/read-tasks.ts";
import {
  CallApprovalParams,
  CallApprovalSchema,
  CallDecisionBody,
  CreateTaskBody,
  TaskParams,
  TaskSchema,
  ToolCallSchema,
  TranscriptSchema,
} from "../../../features/tasks/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonBody, jsonResponse, page, problemResponses } from "../../http/openapi.ts";
import { idempotentChange } from "../operation.ts";

const tags = ["Tasks"];
const base = "/environments/{environmentId}/tasks";

const create = createRoute({
  method: "post",
  path: base,
  operationId: "createTask",
  tags,
  summary: "Start a task: freezes the environment's ready connections into its snapshot and queues it",
  ...idempotentChange,
  request: { params: EnvironmentParams, body: jsonBody(CreateTaskBody) },
  responses: {
    201: jsonResponse(TaskSchema, "The queued task."),
    ...problemResponses(409, 413, 415, 422, 503),
  },
});

const list = createRoute({
  method: "get",
  path: base,
  operationId: "listTasks",
  tags,
  summary: "List the environment's tasks",
  request: { params: EnvironmentParams, query: PageQuery },
  responses: { 200: jsonResponse(page(TaskSchema, "TaskPage"), "A page of tasks."), ...problemResponses() },
});

const get = createRoute({
  method: "get",
  path: `${base}/{taskId}`,
  operationId: "getTask",
  tags,
  summary: "Get a task with its status, snapshot summary and usage",
  request: { params: TaskParams },
  responses: { 200: jsonResponse(TaskSchema, "The task."), ...problemResponses() },
});

const cancel = createRoute({
  method: "post",
  path: `${base}/{taskId}/cancellation`,
  operationId: "cancelTask",
  tags,
  summary: "Cancel a queued or running task",
  ...idempotentChange,
  request: { params: TaskParams },
  responses: {
    200: jsonResponse(TaskSchema, "The task (cancelled, or asked to stop)."),
    ...problemResponses(409),
  },
});

const toolCalls = createRoute({
  method: "get",
  path: `${base}/{taskId}/tool-calls`,
  operationId: "listTaskToolCalls",
  tags,
  summary: "The task's call record: every attempted tool call with its outcome",
  request: { params: TaskParams },
  responses: {
    200: jsonResponse(
      z.object({ items: z.array(ToolCallSchema) }).openapi("ToolCallList"),
      "Calls in order.",
    ),
    ...problemResponses(),
  },
});

const transcript = createRoute({
  method: "get",
  path: `${base}/{taskId}/transcript`,
  operationId: "getTaskTranscript",
  tags,
  summary: "The task's transcript: instructions, model messages, tool calls and results",
  request: { params: TaskParams },
  responses: { 200: jsonResponse(TranscriptSchema, "The transcript."), ...problemResponses() },
});

const callApprovals = createRoute({
  method: "get",
  path: `${base}/{taskId}/call-approvals`,
  operationId: "listTaskCallApprovals",
  tags,
  summary: "The task's write calls waiting for, or given, a person's approval",
  request: { params: TaskParams },
  responses: {
    200: jsonResponse(
      z.object({ items: z.array(CallApprovalSchema) }).openapi("TaskCallApprovalList"),
      "Approvals, oldest first.",
    ),
    ...problemResponses(),
  },
});

const decideCall = createRoute({
  method: "post",
  path: `${base}/{taskId}/call-approvals/{callApprovalId}/decision`,
  operationId: "decideTaskCallApproval",
  tags,
  summary:
    "Approve or reject one pending write call (owners and admins): an approval lets exactly that call through once",
  ...idempotentChange,
  request: { params: CallApprovalParams, body: jsonBody(CallDecisionBody) },
  responses: {
    200: jsonResponse(CallApprovalSchema, "The decided approval."),
    ...problemResponses(409, 410, 415, 422),
  },
});

export function registerTaskRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(create, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json") };
    const task = await createTask({ ctx: c.get("ctx"), input });
    c.header("location", `/api/v1/environments/${task.environmentId}/tasks/${task.id}`);
    return c.json(task, 201);
  });
  app.openapi(list, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await listTasks({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(get, async (c) =>
    c.json(await getTask({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(cancel, async (c) =>
    c.json(await cancelTask({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(toolCalls, async (c) =>
    c.json(await listToolCalls({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(callApprovals, async (c) =>
    c.json(await listCallApprovals({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(decideCall, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json") };
    return c.json(await decideCallApproval({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(transcript, async (c) =>
    c.json(await getTaskTranscript({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
}
