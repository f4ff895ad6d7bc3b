import { z } from "@hono/zod-openapi";
import { isPermission, permissions } from "../../permissions.ts";
import type { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { singleLineText } from "../../schemas.ts";

export const PermissionSchema = z.enum(permissions).openapi("Permission");

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The first characters of the secret, to recognise it." }),
    userId: z.string(),
    permissions: z.array(PermissionSchema),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .openapi("ApiKey", {
    example: {
      id: "key_3j5k7m9p1r3t5v7x9z1b3d5f",
      name: "CI deploys",
      prefix: "sk_4h6j8k0m",
      userId: "usr_2a4c6e8g0j2l4n6q8s0u2w4y",
      permissions: ["mcp_connections:read"],
      createdAt: "2026-11-22T10:00:00.000Z",
      lastUsedAt: null,
      revokedAt: null,
    },
  });
export type ApiKey = z.infer<typeof ApiKeySchema>;

export const CreateApiKeyBody = z
  .object({
    name: singleLineText(100).openapi({ example: "CI deploys" }),
    permissions: z.array(PermissionSchema).min(1).max(permissions.length),
  })
  .strict()
  .openapi("CreateApiKey");

export const CreatedApiKeySchema = z
  .object({
    apiKey: ApiKeySchema,
    secret: z.string().openapi({ description: "The key itself. Shown once; store it now." }),
  })
  .openapi("CreatedApiKey");

export const ApiKeyParams = z.object({
  apiKeyId: z
    .string()
    .max(64)
    .openapi({ param: { name: "apiKeyId", in: "path" } }),
});

/** The public view of a key: never the secret or its hash. */
export const toApiKey = (row: typeof apiKeys.$inferSelect): ApiKey => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  userId: row.userId,
  permissions: row.permissions.filter(isPermission),
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});
