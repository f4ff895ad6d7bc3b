import { z } from "@hono/zod-openapi";
import { auditActions, auditChannels } from "../../platform/audit/actions.ts";
import { PageQuery } from "../../schemas.ts";

export const AuditActionSchema = z.enum(auditActions).openapi("AuditAction");
export const AuditChannelSchema = z.enum(auditChannels).openapi("AuditChannel", {
  description:
    "The door the change came through. `cli` is the REST API called by the `patchbay` CLI; `unknown` only on events recorded before the door was.",
});

const actorTypes = [
  "api_key",
  "oauth_token",
  "web_session",
  "user",
  "wallet",
  "onboarding_session",
  "system",
] as const;

export const AuditEventSchema = z
  .object({
    id: z.string().openapi({ description: "Increases with every event of the installation." }),
    occurredAt: z.iso.datetime(),
    action: AuditActionSchema,
    channel: AuditChannelSchema,
    actor: z
      .object({
        type: z.enum(actorTypes),
        id: z.string().openapi({
          description:
            "The credential or principal: an API key's id, an OAuth grant (`oag_…`), a web session, a user id, a wallet address or a job's name.",
        }),
        userId: z.string().nullable().openapi({ description: "The person behind the credential, if any." }),
        email: z.string().nullable().openapi({ description: "That person's email, if any." }),
      })
      .strict(),
    target: z.object({ type: z.string(), id: z.string() }).strict(),
    environmentId: z
      .string()
      .nullable()
      .openapi({ description: "The environment the target belongs to; null for organisation-wide targets." }),
    requestId: z
      .string()
      .nullable()
      .openapi({ description: "The request that made the change (`X-Request-Id`)." }),
    details: z
      .record(z.string(), z.unknown())
      .openapi({ description: "Ids, names, revisions and counts of the change. Never secrets." }),
  })
  .strict()
  .openapi("AuditEvent", {
    example: {
      id: "1042",
      occurredAt: "2026-11-22T10:00:00.000Z",
      action: "mcp_connection.enabled",
      channel: "cli",
      actor: {
        type: "oauth_token",
        id: "oag_2a4c6e8g0j2l4n6q8s0u2w4y",
        userId: "usr_2a4c6e8g0j2l4n6q8s0u2w4y",
        email: "ops@example.com",
      },
      target: { type: "mcp_connection", id: "mcp_3j5k7m9p1r3t5v7x9z1b3d5f" },
      environmentId: "0e7c5b1e-8f0a-4d7e-9d59-2a8f0c6b3e41",
      requestId: "req_5y0qj1h8m3x2v4n6b7c9d0fz",
      details: { revision: 4 },
    },
  });
export type AuditEvent = z.infer<typeof AuditEventSchema>;

export const AuditEventPageSchema = z
  .object({ items: z.array(AuditEventSchema), nextCursor: z.string().nullable() })
  .strict()
  .openapi("AuditEventPage");
export type AuditEventPage = z.infer<typeof AuditEventPageSchema>;

const text = (max: number) => z.string().trim().min(1).max(max);
const instant = z.iso.datetime({ offset: true });

/**
 * The trail's filters. Closed: an unknown parameter is refused (400) rather than ignored, so a
 * misspelt filter never answers with the whole trail.
 */
export const AuditEventQuery = PageQuery.extend({
  environmentId: z
    .uuid()
    .optional()
    .openapi({
      param: { name: "environmentId", in: "query" },
      description: "Only events of this environment.",
    }),
  actor: text(320)
    .optional()
    .openapi({
      param: { name: "actor", in: "query" },
      description:
        "Only events by this actor: a member's email or user id (`usr_…`, any of their keys, tokens and sessions), or a credential's id (`key_…`, `oag_…`, a wallet address, a job's name).",
    }),
  action: AuditActionSchema.optional().openapi({ param: { name: "action", in: "query" } }),
  target: text(200)
    .optional()
    .openapi({
      param: { name: "target", in: "query" },
      description: "Only events about this id (a connection, key, task…).",
    }),
  channel: AuditChannelSchema.optional().openapi({ param: { name: "channel", in: "query" } }),
  from: instant.optional().openapi({
    param: { name: "from", in: "query" },
    description: "Events at or after this instant (ISO 8601).",
  }),
  to: instant
    .optional()
    .openapi({ param: { name: "to", in: "query" }, description: "Events before this instant (ISO 8601)." }),
})
  .strict()
  .openapi("AuditEventQuery");
export type AuditEventQueryInput = z.infer<typeof AuditEventQuery>;

export const OrganizationParams = z.object({
  organizationId: z
    .string()
    .max(64)
    .openapi({
      param: { name: "organizationId", in: "path" },
      description: "Your organisation's id (`GET /me`).",
    }),
});
