/**
 * The detail fields the trail shows: an allow-list, not a deny-list. Writers are told never to put
 * secrets in `details` (record-audit.ts), and this is the second lock: a field a future writer adds
 * stays hidden until it is named here, so a secret can only reach a reader by being added to this
 * list on purpose.
 */
const shown = new Set([
  "environmentId",
  "from",
  "to",
  "revision",
  "status",
  "kind",
  "problemId",
  "service",
  "repository",
  "provider",
  "services",
  "discoveryId",
  "toolCount",
  "manifestHash",
  "credentialVersion",
  "effects",
  "approvedToolCount",
  "credentialDestroyed",
  "runningTasksAffected",
  "alias",
  "endpointOrigin",
  "authKind",
  "changed",
  "approvalStale",
  "toolNames",
  "readTools",
  "attestedReadOnly",
  "name",
  "permissions",
  "email",
  "role",
  "expiresAt",
  "apiKeysRevoked",
  "oauthGrantsRevoked",
  "network",
  "publishableKeyId",
  "prefix",
  "userId",
  "apiKeyId",
  "account",
  "onboardingSessionId",
  "clientId",
  "resources",
  "scopes",
  "connections",
  "tools",
  "callApprovalId",
  "connectionId",
  "connectionRevision",
  "toolName",
  "argumentsHash",
  "eventTypes",
  "enabled",
  "secretVersion",
  "deliveryId",
  "redeliveryOf",
  "eventType",
]);

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

function clean(value: unknown, depth: number): Json | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (depth >= 3) return undefined;
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1)).filter((v) => v !== undefined);
  if (typeof value === "object") return pick(value as Record<string, unknown>, depth + 1);
  return undefined;
}

function pick(details: Record<string, unknown>, depth: number): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(details)) {
    if (!shown.has(key)) continue;
    const cleaned = clean(value, depth);
    if (cleaned !== undefined) out[key] = cleaned;
  }
  return out;
}

/** The shown part of a row's details (nested objects filtered by the same list). */
export const safeDetails = (details: Record<string, unknown> | null): { [key: string]: Json } =>
  details ? pick(details, 0) : {};
