import { z } from "@hono/zod-openapi";
import {
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  webhookDeliveryStatuses,
} from "../../platform/db/schema/webhooks.ts";
import { isWebhookEventType, type WebhookEventType, webhookEventTypes } from "./event-types.ts";

const iso = z.iso.datetime();

export const WebhookEventTypeSchema = z.enum(webhookEventTypes).openapi("WebhookEventType");

export const WebhookEndpointSchema = z
  .object({
    id: z.string().openapi({ example: "whe_4k6m8p0r2t4v6x8z0b2d4f6h" }),
    organizationId: z.string(),
    url: z.string().openapi({ example: "https://hooks.example.com/patchbay" }),
    description: z.string(),
    eventTypes: z.array(WebhookEventTypeSchema),
    enabled: z.boolean(),
    disabledReason: z.enum(["manual", "failing"]).nullable().openapi({
      description:
        "`failing`: disabled by patchbay after 5 deliveries in a row failed every attempt (docs/webhooks.md); enable it again to resume.",
    }),
    disabledAt: iso.nullable(),
    failedDeliveriesInRow: z.number().int().min(0),
    lastSuccessAt: iso.nullable(),
    lastFailureAt: iso.nullable(),
    secretRotatedAt: iso.nullable(),
    revision: z.number().int().min(1),
    createdAt: iso,
    updatedAt: iso,
  })
  .strict()
  .openapi("WebhookEndpoint", { description: "The signing secret is never part of it." });
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

// Checked by the verb, so an unknown name is `unknown_event_type` (400) with the list of known ones.
const eventTypes = z
  .array(z.string().max(64))
  .min(1)
  .max(20)
  .openapi({
    type: "array",
    items: { $ref: "#/components/schemas/WebhookEventType" },
    description: "What to send; unknown names are refused with `unknown_event_type`.",
  });

const url = z.string().min(1).max(2048).openapi({
  example: "https://hooks.example.com/patchbay",
  description: "Public `https://` only (no query, fragment or credentials); checked again at every delivery.",
});
// Optional and may be empty, unlike singleLineText; the same refusal of control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const noControlCharacters = /^[^\u0000-\u001f\u007f]*$/;
const description = z
  .string()
  .trim()
  .max(200)
  .regex(noControlCharacters, "must not contain control characters");

export const CreateWebhookEndpointBody = z
  .object({ url, eventTypes, description: description.optional() })
  .strict()
  .openapi("CreateWebhookEndpoint", {
    example: { url: "https://hooks.example.com/patchbay", eventTypes: ["remediation.failed"] },
  });

export const UpdateWebhookEndpointBody = z
  .object({
    url: url.optional(),
    eventTypes: eventTypes.optional(),
    description: description.optional(),
    enabled: z.boolean().optional().openapi({
      description: "Enabling an endpoint patchbay disabled resets its failure count.",
    }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "give at least one of url, eventTypes, description, enabled")
  .openapi("UpdateWebhookEndpoint");

const secret = z.string().openapi({
  description:
    "The Standard Webhooks signing secret (`whsec_` + base64). Shown once; store it now. Verify with any Standard Webhooks library.",
  example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
});

export const CreatedWebhookEndpointSchema = z
  .object({ endpoint: WebhookEndpointSchema, secret })
  .strict()
  .openapi("CreatedWebhookEndpoint");

export const RotatedWebhookSecretSchema = z
  .object({ endpoint: WebhookEndpointSchema, secret })
  .strict()
  .openapi("RotatedWebhookSecret", {
    description: "The old secret stops signing at once; deliveries still queued are signed with the new one.",
  });

export const WebhookAttemptSchema = z
  .object({
    attempt: z.number().int().min(1),
    attemptedAt: iso,
    durationMs: z.number().int().min(0),
    responseStatus: z.number().int().nullable().openapi({ description: "Null when no answer came." }),
    responseBodyExcerpt: z
      .string()
      .nullable()
      .openapi({ description: "The first 1 KiB of the answer's body, as text." }),
    errorCode: z.string().nullable().openapi({
      description:
        "`http_status` for a non-2xx answer; otherwise why no answer came: `egress_blocked`, `remote_unreachable`, `remote_timeout`, …",
    }),
    succeeded: z.boolean(),
  })
  .strict()
  .openapi("WebhookAttempt");

export const WebhookDeliverySchema = z
  .object({
    id: z.string().openapi({ example: "whd_2b4d6f8h0k2m4p6r8t0v2x4z" }),
    endpointId: z.string(),
    messageId: z.string().openapi({ description: "Sent as `webhook-id`; kept by a redelivery." }),
    eventType: WebhookEventTypeSchema,
    status: z.enum(webhookDeliveryStatuses),
    attempts: z.number().int().min(0),
    nextAttemptAt: iso.nullable(),
    redeliveryOf: z.string().nullable(),
    createdAt: iso,
    finishedAt: iso.nullable(),
    payload: z.record(z.string(), z.unknown()).openapi({ description: "The signed body." }),
    lastAttempts: z
      .array(WebhookAttemptSchema)
      .openapi({ description: "The latest attempts, newest first (at most 10)." }),
  })
  .strict()
  .openapi("WebhookDelivery");
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

const pathId = (name: string, example: string) =>
  z
    .string()
    .max(64)
    .openapi({ param: { name, in: "path" }, example });

export const OrganizationParams = z.object({
  organizationId: pathId("organizationId", "org_1a3c5e7g9j1l3n5q7s9u1w3y"),
});
export const WebhookEndpointParams = OrganizationParams.extend({
  endpointId: pathId("endpointId", "whe_4k6m8p0r2t4v6x8z0b2d4f6h"),
});
export const WebhookDeliveryParams = WebhookEndpointParams.extend({
  deliveryId: pathId("deliveryId", "whd_2b4d6f8h0k2m4p6r8t0v2x4z"),
});

/** The public view: never the secret or its sealed form, or the vault binding. */
export const toWebhookEndpoint = (row: WebhookEndpointRow): WebhookEndpoint => ({
  id: row.id,
  organizationId: row.organizationId,
  url: row.url,
  description: row.description,
  eventTypes: row.eventTypes.filter(isWebhookEventType),
  enabled: row.enabled,
  disabledReason:
    row.disabledReason === "manual" || row.disabledReason === "failing" ? row.disabledReason : null,
  disabledAt: row.disabledAt?.toISOString() ?? null,
  failedDeliveriesInRow: row.failedDeliveriesInRow,
  lastSuccessAt: row.lastSuccessAt?.toISOString() ?? null,
  lastFailureAt: row.lastFailureAt?.toISOString() ?? null,
  secretRotatedAt: row.secretRotatedAt?.toISOString() ?? null,
  revision: row.revision,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const toWebhookDelivery = (
  row: WebhookDeliveryRow,
  attempts: WebhookAttemptRow[],
): WebhookDelivery => ({
  id: row.id,
  endpointId: row.endpointId,
  messageId: row.messageId,
  // Rows are only written with a known type (emit.ts takes a WebhookEventType).
  eventType: row.eventType as WebhookEventType,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
  redeliveryOf: row.redeliveryOf,
  createdAt: row.createdAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
  payload: row.payload,
  lastAttempts: attempts.map((a) => ({
    attempt: a.attempt,
    attemptedAt: a.attemptedAt.toISOString(),
    durationMs: a.durationMs,
    responseStatus: a.responseStatus,
    responseBodyExcerpt: a.responseBodyExcerpt,
    errorCode: a.errorCode,
    succeeded: a.succeeded,
  })),
});
