export { emitWebhookEvent, webhookOutboxInsert } from "./emit.ts";
export { isWebhookEventType, type WebhookEventType, webhookEventTypes } from "./event-types.ts";
