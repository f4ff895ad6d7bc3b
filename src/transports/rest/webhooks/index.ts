import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  CreatedWebhookEndpointSchema,
  CreateWebhookEndpointBody,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookDelivery,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  OrganizationParams,
  RotatedWebhookSecretSchema,
  redeliverWebhook,
  rotateWebhookSecret,
  UpdateWebhookEndpointBody,
  updateWebhookEndpoint,
  WebhookDeliveryParams,
  WebhookDeliverySchema,
  WebhookEndpointParams,
  WebhookEndpointSchema,
  webhookEventTypes,
} from "../../../features/webhooks/index.ts";
import { webhookEnvelope, webhookEventData } from "../../../features/webhooks/payloads.ts";
import { webhookDeliveryStatuses } from "../../../platform/db/schema/webhooks.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonBody, jsonResponse, page, problemResponses } from "../../http/openapi.ts";

const tags = ["Webhooks"];
const base = "/organizations/{organizationId}/webhook-endpoints";

const list = createRoute({
  method: "get",
  path: base,
  operationId: "listWebhookEndpoints",
  tags,
  summary: "List the organisation's webhook endpoints",
  request: { params: OrganizationParams, query: PageQuery },
  responses: {
    200: jsonResponse(
      page(WebhookEndpointSchema, "WebhookEndpointPage"),
      "A page of endpoints (never secrets).",
    ),
    ...problemResponses(),
  },
});

// No Idempotency-Key: replaying the stored response would mean storing the secret.
const create = createRoute({
  method: "post",
  path: base,
  operationId: "createWebhookEndpoint",
  tags,
  summary: "Create a webhook endpoint (the signing secret is shown once)",
  request: { params: OrganizationParams, body: jsonBody(CreateWebhookEndpointBody) },
  responses: {
    201: jsonResponse(CreatedWebhookEndpointSchema, "The endpoint and its signing secret."),
    ...problemResponses(409, 413, 415),
  },
});

const get = createRoute({
  method: "get",
  path: `${base}/{endpointId}`,
  operationId: "getWebhookEndpoint",
  tags,
  summary: "Read a webhook endpoint",
  request: { params: WebhookEndpointParams },
  responses: { 200: jsonResponse(WebhookEndpointSchema, "The endpoint."), ...problemResponses() },
});

const update = createRoute({
  method: "patch",
  path: `${base}/{endpointId}`,
  operationId: "updateWebhookEndpoint",
  tags,
  summary: "Change a webhook endpoint's URL, event types or description, or enable/disable it",
  request: { params: WebhookEndpointParams, body: jsonBody(UpdateWebhookEndpointBody) },
  responses: { 200: jsonResponse(WebhookEndpointSchema, "The endpoint."), ...problemResponses(413, 415) },
});

const remove = createRoute({
  method: "delete",
  path: `${base}/{endpointId}`,
  operationId: "deleteWebhookEndpoint",
  tags,
  summary: "Delete a webhook endpoint with its secret and delivery log",
  request: { params: WebhookEndpointParams },
  responses: { 204: { description: "Deleted." }, ...problemResponses() },
});

const rotate = createRoute({
  method: "post",
  path: `${base}/{endpointId}/secret-rotations`,
  operationId: "rotateWebhookSecret",
  tags,
  summary: "Replace the signing secret (the new one is shown once)",
  request: { params: WebhookEndpointParams },
  responses: { 200: jsonResponse(RotatedWebhookSecretSchema, "The new secret."), ...problemResponses() },
});

const DeliveryQuery = PageQuery.extend({
  status: z
    .enum(webhookDeliveryStatuses)
    .optional()
    .openapi({ param: { name: "status", in: "query" }, description: "Only deliveries in this state." }),
});

const deliveries = createRoute({
  method: "get",
  path: `${base}/{endpointId}/deliveries`,
  operationId: "listWebhookDeliveries",
  tags,
  summary: "The endpoint's delivery log, newest first, with each delivery's latest answers",
  request: { params: WebhookEndpointParams, query: DeliveryQuery },
  responses: {
    200: jsonResponse(page(WebhookDeliverySchema, "WebhookDeliveryPage"), "A page of deliveries."),
    ...problemResponses(),
  },
});

const delivery = createRoute({
  method: "get",
  path: `${base}/{endpointId}/deliveries/{deliveryId}`,
  operationId: "getWebhookDelivery",
  tags,
  summary: "Read one delivery with its latest answers",
  request: { params: WebhookDeliveryParams },
  responses: { 200: jsonResponse(WebhookDeliverySchema, "The delivery."), ...problemResponses() },
});

const redeliver = createRoute({
  method: "post",
  path: `${base}/{endpointId}/deliveries/{deliveryId}/redeliveries`,
  operationId: "redeliverWebhook",
  tags,
  summary: "Send a delivery's message again (same webhook-id), as a new delivery",
  request: { params: WebhookDeliveryParams },
  responses: {
    201: jsonResponse(WebhookDeliverySchema, "The new delivery, queued."),
    ...problemResponses(409),
  },
});

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) =>
    c.json(
      await listWebhookEndpoints({
        ctx: c.get("ctx"),
        input: { ...c.req.valid("param"), ...c.req.valid("query") },
      }),
      200,
    ),
  );
  app.openapi(create, async (c) => {
    const created = await createWebhookEndpoint({
      ctx: c.get("ctx"),
      input: { ...c.req.valid("param"), ...c.req.valid("json") },
    });
    c.header("cache-control", "no-store");
    return c.json(created, 201);
  });
  app.openapi(get, async (c) =>
    c.json(await getWebhookEndpoint({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(update, async (c) =>
    c.json(
      await updateWebhookEndpoint({
        ctx: c.get("ctx"),
        input: { ...c.req.valid("param"), ...c.req.valid("json") },
      }),
      200,
    ),
  );
  app.openapi(remove, async (c) => {
    await deleteWebhookEndpoint({ ctx: c.get("ctx"), input: c.req.valid("param") });
    return c.body(null, 204);
  });
  app.openapi(rotate, async (c) => {
    const rotated = await rotateWebhookSecret({ ctx: c.get("ctx"), input: c.req.valid("param") });
    c.header("cache-control", "no-store");
    return c.json(rotated, 200);
  });
  app.openapi(deliveries, async (c) =>
    c.json(
      await listWebhookDeliveries({
        ctx: c.get("ctx"),
        input: { ...c.req.valid("param"), ...c.req.valid("query") },
      }),
      200,
    ),
  );
  app.openapi(delivery, async (c) =>
    c.json(await getWebhookDelivery({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(redeliver, async (c) =>
    c.json(await redeliverWebhook({ ctx: c.get("ctx"), input: c.req.valid("param") }), 201),
  );
  registerWebhookEvents(app);
}

/**
 * Each event type under the document's top-level `webhooks` (OpenAPI 3.1): the POST patchbay
 * sends, its Standard Webhooks headers and its body.
 */
function registerWebhookEvents(app: OpenAPIHono<AppEnv>): void {
  for (const type of webhookEventTypes) {
    const event = webhookEventData[type];
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      operationId: `webhook_${type.replace(/[^a-z]+/g, "_")}`,
      tags,
      summary: event.summary,
      description: `${event.description}\n\nSigned per Standard Webhooks: verify \`webhook-signature\` over \`webhook-id.webhook-timestamp.body\` with the endpoint's \`whsec_\` secret (docs/webhooks.md). Answer 2xx within 15 s; anything else is retried with exponential backoff.`,
      request: {
        headers: z.object({
          "webhook-id": z
            .string()
            .openapi({ description: "The message id; the same on every retry and redelivery." }),
          "webhook-timestamp": z.string().openapi({ description: "Unix seconds of this attempt." }),
          "webhook-signature": z.string().openapi({ description: "`v1,<base64 HMAC-SHA256>`." }),
        }),
        body: jsonBody(webhookEnvelope(type)),
      },
      responses: { 200: { description: "Any 2xx acknowledges the delivery." } },
    });
  }
}
