import { z } from "@hono/zod-openapi";
import type { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { singleLineText } from "../../schemas.ts";

export const PublishableKeySchema = z
  .object({
    id: z.string(),
    environmentId: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The first characters of the key, to recognise it." }),
    createdBy: z.string().openapi({ description: "The user who created the key." }),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso
      .datetime()
      .nullable()
      .openapi({ description: "Last accepted telemetry request (refreshed at most once a minute)." }),
    revokedAt: z.iso.datetime().nullable(),
  })
  .openapi("PublishableKey", {
    example: {
      id: "pbk_7c9e1g3j5l7n9q1s3u5w7y9a",
      environmentId: "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d",
      name: "web frontend",
      prefix: "pk_5t7v9x1z",
      createdBy: "usr_2a4c6e8g0j2l4n6q8s0u2w4y",
      createdAt: "2026-11-22T10:00:00.000Z",
      lastUsedAt: null,
      revokedAt: null,
    },
  });
export type PublishableKey = z.infer<typeof PublishableKeySchema>;

export const CreatePublishableKeyBody = z
  .object({ name: singleLineText(100).openapi({ example: "web frontend" }) })
  .strict()
  .openapi("CreatePublishableKey");

export const CreatedPublishableKeySchema = z
  .object({
    publishableKey: PublishableKeySchema,
    key: z.string().openapi({
      description:
        "The key itself, shown once. Send it as `Authorization: Bearer pk_…` or `x-patchbay-key` on /v1/traces, /v1/logs and /v1/metrics.",
      example: "pk_5t7v9x1z3b5d7f9h1k3m5p7r9t1v3x5z7b9d1f3h",
    }),
  })
  .openapi("CreatedPublishableKey");

export const PublishableKeyParams = z.object({
  environmentId: z
    .uuid()
    .openapi({ param: { name: "environmentId", in: "path" }, description: "Environment UUID." }),
  keyId: z
    .string()
    .max(64)
    .openapi({ param: { name: "keyId", in: "path" }, example: "pbk_7c9e1g3j5l7n9q1s3u5w7y9a" }),
});

/** The public view of a key: never the key or its hash. */
export const toPublishableKey = (row: typeof publishableKeys.$inferSelect): PublishableKey => ({
  id: row.id,
  environmentId: row.environmentId,
  name: row.name,
  prefix: row.prefix,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});
