export {
  defaultWebhookSettings,
  deliverAttempt,
  dispatchWebhookDeliveries,
  registerWebhookWorker,
  retryDelayMs,
  WEBHOOK_QUEUE,
  type WebhookSettings,
  webhookQueues,
} from "./deliver.ts";
export { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook } from "./deliveries.ts";
export { emitWebhookEvent, emitWebhookEventBestEffort, webhookOutboxInsert } from "./emit.ts";
export {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  MAX_WEBHOOK_ENDPOINTS,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from "./endpoints.ts";
export { isWebhookEventType, type WebhookEventType, webhookEventTypes } from "./event-types.ts";
export * from "./schemas.ts";
export { rewrapWebhookSecrets } from "./signing-secret.ts";
