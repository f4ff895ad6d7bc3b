import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { approveRemediation, cancelRemediation } from "../../../features/remediations/decide-remediation.ts";
import {
  getRemediation,
  getRemediationReview,
  showProposedChange,
} from "../../../features/remediations/get-remediation.ts";
import { listRemediations } from "../../../features/remediations/list-remediations.ts";
import {
  CreateRemediationBody,
  ProblemParams,
  ProposedChangeSchema,
  RemediationParams,
  RemediationReviewSchema,
  RemediationSchema,
  RemediationSummarySchema,
} from "../../../features/remediations/schemas.ts";
import { startRemediation } from "../../../features/remediations/start-remediation.ts";
import { remediationStatuses } from "../../../platform/db/schema/remediations.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { idempotent } from "../../http/idempotency.ts";
import { idempotencyKeyParam, jsonResponse, page, problemResponses } from "../../http/openapi.ts";

const tags = ["Remediations"];
const base = "/environments/{environmentId}/remediations";

const create = createRoute({
  method: "post",
  path: "/environments/{environmentId}/problems/{problemId}/remediations",
  operationId: "createRemediation",
  tags,
  summary: "Start a remediation run for a problem (asynchronous; poll the run)",
  middleware: [idempotent()],
  parameters: [idempotencyKeyParam],
  request: {
    params: ProblemParams,
    body: { required: false, content: { "application/json": { schema: CreateRemediationBody } } },
  },
  responses: {
    201: jsonResponse(RemediationSchema, "The queued run."),
    ...problemResponses(409, 413, 415, 503),
  },
});

const ListQuery = PageQuery.extend({
  problemId: z
    .string()
    .max(64)
    .optional()
    .openapi({ param: { name: "problemId", in: "query" } }),
  status: z
    .enum(remediationStatuses)
    .optional()
    .openapi({ param: { name: "status", in: "query" } }),
});

const list = createRoute({
  method: "get",
  path: base,
  operationId: "listRemediations",
  tags,
  summary: "List the environment's remediation runs",
  request: { params: EnvironmentParams, query: ListQuery },
  responses: {
    200: jsonResponse(page(RemediationSummarySchema, "RemediationPage"), "A page of runs."),
    ...problemResponses(),
  },
});

const get = createRoute({
  method: "get",
  path: `${base}/{remediationId}`,
  operationId: "getRemediation",
  tags,
  summary: "Get a run: status, threadUrl, prUrl when ready, approval link when waiting, progress events",
  request: { params: RemediationParams },
  responses: { 200: jsonResponse(RemediationSchema, "The run."), ...problemResponses() },
});

const mutation = (path: string, operationId: string, summary: string, description: string) =>
  createRoute({
    method: "post",
    path: `${base}/{remediationId}/${path}`,
    operationId,
    tags,
    summary,
    description,
    middleware: [idempotent()],
    parameters: [idempotencyKeyParam],
    request: { params: RemediationParams },
    responses: { 200: jsonResponse(RemediationSchema, "The run."), ...problemResponses(409) },
  });

const cancel = mutation(
  "cancellation",
  "cancelRemediation",
  "Cancel a run",
  "Queued and waiting runs end at once; a working run stops after the step in progress. Runs in review end by closing their pull request.",
);
const approve = mutation(
  "approval",
  "approveRemediation",
  "Approve a high-risk change waiting in awaiting-approval",
  "Owners and admins only. Repository access is granted by registering the repository instead.",
);

const review = createRoute({
  method: "get",
  path: `${base}/{remediationId}/review`,
  operationId: "getRemediationReview",
  tags,
  summary: "The proposed commit for review: diff, test result, and how to merge it by hand",
  request: { params: RemediationParams },
  responses: { 200: jsonResponse(RemediationReviewSchema, "The review."), ...problemResponses() },
});

const proposedChange = createRoute({
  method: "get",
  path: `${base}/{remediationId}/proposed-change`,
  operationId: "getProposedChange",
  tags,
  summary: "The change the agent proposed: files, diff and risk — what an approver reads before approving",
  description:
    "Available from the moment the agent proposes a change (also while a high-risk change waits in `awaiting-approval`, before any commit exists). `404 not_found` with `remediationStatus` while nothing is proposed.",
  request: { params: RemediationParams },
  responses: { 200: jsonResponse(ProposedChangeSchema, "The proposed change."), ...problemResponses() },
});

export function registerRemediationRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(create, async (c) => {
    const body = c.req.header("content-length") === "0" ? {} : await c.req.json().catch(() => ({}));
    const parsed = CreateRemediationBody.parse(body ?? {});
    const { run } = await startRemediation({
      ctx: c.get("ctx"),
      input: { ...c.req.valid("param"), ...parsed },
    });
    c.header("location", `/api/v1/environments/${run.environmentId}/remediations/${run.id}`);
    return c.json(run, 201);
  });
  app.openapi(list, async (c) =>
    c.json(
      await listRemediations({
        ctx: c.get("ctx"),
        input: { ...c.req.valid("param"), ...c.req.valid("query") },
      }),
      200,
    ),
  );
  app.openapi(get, async (c) =>
    c.json(await getRemediation({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(cancel, async (c) =>
    c.json(await cancelRemediation({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(approve, async (c) =>
    c.json(await approveRemediation({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(proposedChange, async (c) =>
    c.json(await showProposedChange({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(review, async (c) =>
    c.json(await getRemediationReview({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
}
