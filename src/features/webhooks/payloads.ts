import { z } from "@hono/zod-openapi";
import type { WebhookEventType } from "./event-types.ts";

/**
 * Every event's signed body: `{ type, timestamp, data }` (Standard Webhooks). `data` per type is
 * below; fields may be added, never removed or changed in meaning. Published under `webhooks` in
 * the OpenAPI document and in docs/webhooks.md.
 */
const iso = z.iso.datetime();
const orgEnv = { organizationId: z.string(), environmentId: z.uuid() };

const remediationData = z
  .object({
    ...orgEnv,
    remediationId: z.string(),
    problemId: z.string().nullable(),
    status: z.string(),
    url: z.string().openapi({ description: "The run's page in the web UI." }),
  })
  .openapi("WebhookRemediationData");

export const webhookEventData: Record<
  WebhookEventType,
  { schema: z.ZodType; summary: string; description: string }
> = {
  "operator_approval.requested": {
    summary: "A person must approve a step",
    description:
      "A remediation run waits for an owner or admin: the high-risk change it proposes must be approved (operator step `approve_change`). Sent once per run when it starts waiting.",
    schema: remediationData
      .extend({
        step: z.literal("approve_change"),
        approval: z
          .object({ kind: z.string(), message: z.string() })
          .nullable()
          .openapi({ description: "What the person is asked to approve, in words." }),
      })
      .openapi("WebhookOperatorApprovalData"),
  },
  "pull_request.awaiting_review": {
    summary: "A pull request awaits review",
    description:
      "A remediation run opened its pull request and waits for its review (operator step `review_pull_request`).",
    schema: remediationData
      .extend({ step: z.literal("review_pull_request"), pullRequestUrl: z.string().nullable() })
      .openapi("WebhookPullRequestData"),
  },
  "remediation.failed": {
    summary: "A remediation run failed",
    description: "A remediation run ended `failed`; `reason` says why in words.",
    schema: remediationData
      .extend({ reasonCode: z.string().nullable(), reason: z.string().nullable() })
      .openapi("WebhookRemediationFailedData"),
  },
  "problem.new": {
    summary: "A new problem was seen",
    description: "Telemetry showed an error with a fingerprint the environment had not seen before.",
    schema: z
      .object({
        ...orgEnv,
        problemId: z.string(),
        title: z.string(),
        service: z.string(),
        firstSeen: iso,
        count: z.number().int(),
      })
      .openapi("WebhookProblemData"),
  },
  "problem.regressed": {
    summary: "A resolved problem came back",
    description: "A problem marked resolved was seen again after its resolution: it is `regressed` now.",
    schema: z
      .object({
        ...orgEnv,
        problemId: z.string(),
        title: z.string(),
        service: z.string(),
        lastSeen: iso,
        resolvedAt: iso.nullable(),
      })
      .openapi("WebhookProblemRegressedData"),
  },
  "connection.credential_rejected": {
    summary: "A connection's remote rejects its credential",
    description:
      "A task's call to the connection's MCP server was answered 401/403 (`remote_auth_failed`) after its last success. Sent once when the condition starts; it ends with a successful call or a new credential (see the connection's `health`). The connection's readiness does not change.",
    schema: z
      .object({
        ...orgEnv,
        connectionId: z.string(),
        alias: z.string(),
        displayName: z.string(),
        endpointOrigin: z.string(),
        authKind: z.enum(["none", "bearer", "api_key"]),
        rejectedAt: iso,
      })
      .openapi("WebhookCredentialRejectedData"),
  },
};

/** The signed body of an event of `type`, for the OpenAPI document. */
export const webhookEnvelope = (type: WebhookEventType) =>
  z
    .object({
      type: z.literal(type),
      timestamp: iso.openapi({ description: "When the event happened." }),
      data: webhookEventData[type].schema,
    })
    .openapi(`WebhookEvent_${type.replace(/[^a-z]+/g, "_")}`);
