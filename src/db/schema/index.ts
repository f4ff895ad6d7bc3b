export * from "./api-keys.ts";
export * from "./audit-log.ts";
export * from "./environments.ts";
export * from "./idempotency-keys.ts";
export * from "./organizations.ts";
export * from "./users.ts";
