/** What an endpoint can subscribe to (docs/webhooks.md; payloads under `webhooks` in docs/openapi.json). */
export const webhookEventTypes = [
  "operator_approval.requested",
  "pull_request.awaiting_review",
  "remediation.failed",
  "problem.new",
  "problem.regressed",
  "connection.credential_rejected",
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (webhookEventTypes as readonly string[]).includes(value);
