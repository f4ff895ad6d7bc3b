import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { newId } from "../../ids.ts";
import type { Permission } from "../../permissions.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { generateApiKeySecret } from "./key-secret.ts";
import { type ApiKey, toApiKey } from "./schemas.ts";

/**
 * Creates a key for the calling user. Owners and admins only; this is where the MCP connection
 * permissions are provisioned (spec 5.2). The secret is returned once and stored only hashed.
 */
export async function createApiKey(args: {
  ctx: ServiceContext;
  input: { name: string; permissions: Permission[] };
}): Promise<{ apiKey: ApiKey; secret: string }> {
  const member = requireOwnerOrAdmin(args.ctx, "api_keys:manage");
  const key = generateApiKeySecret();
  return withTransaction(args.ctx, async (tx) => {
    const [row] = await tx
      .insert(apiKeys)
      .values({
        id: newId("key"),
        organizationId: args.ctx.actor.organizationId,
        userId: member.userId,
        name: args.input.name,
        prefix: key.prefix,
        secretHash: key.hash,
        permissions: [...new Set(args.input.permissions)],
        createdAt: args.ctx.deps.clock(),
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, args.ctx, {
      action: "api_key.created",
      targetType: "api_key",
      targetId: row.id,
      details: { name: row.name, permissions: row.permissions },
    });
    return { apiKey: toApiKey(row), secret: key.secret };
  });
}
