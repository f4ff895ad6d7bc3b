export { registerWebhookWorker, webhookQueues } from "./deliver.ts";
export { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook } from "./deliveries.ts";
export { emitWebhookEvent, emitWebhookEventBestEffort, webhookOutboxInsert } from "./emit.ts";
export {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from "./endpoints.ts";
export { type WebhookEventType, webhookEventTypes } from "./event-types.ts";
export * from "./schemas.ts";
export { rewrapWebhookSecrets } from "./signing-secret.ts";
