import { bigserial, index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";

/**
 * Append-only. Written in the same transaction as the change it describes; never holds secrets.
 * `channel` is the door the change came through (rest, cli, mcp, web, x402, system; `unknown` on
 * rows written before it was recorded); `actorUserId` the person behind a key, token or web
 * session; `environmentId` the environment the target belongs to, for the trail's filters.
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    organizationId: text("organization_id").notNull(),
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id").notNull(),
    actorUserId: text("actor_user_id"),
    channel: text("channel").notNull().default("unknown"),
    environmentId: text("environment_id"),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    requestId: text("request_id"),
    idempotencyKey: text("idempotency_key"),
    details: jsonb("details").$type<Record<string, unknown>>(),
    createdAt: millis("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("audit_log_org_idx").on(t.organizationId, t.createdAt),
    index("audit_log_org_env_idx").on(t.organizationId, t.environmentId, t.createdAt),
  ],
);
