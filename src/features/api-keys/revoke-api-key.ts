import { and, eq, isNull } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { notifyAuthChanged } from "./auth-changes.ts";

/** Revokes a key of the caller's organisation. Revoking an already revoked key succeeds. */
export async function revokeApiKey(args: {
  ctx: ServiceContext;
  input: { apiKeyId: string };
}): Promise<void> {
  requireOwnerOrAdmin(args.ctx, "api_keys:manage");
  const change = await withTransaction(args.ctx, async (tx) => {
    const scope = and(
      eq(apiKeys.id, args.input.apiKeyId),
      eq(apiKeys.organizationId, args.ctx.actor.organizationId),
    );
    const [existing] = await tx.select({ id: apiKeys.id }).from(apiKeys).where(scope).limit(1);
    if (!existing) throw new AppError("not_found", `API key ${args.input.apiKeyId} was not found.`);
    const revoked = await tx
      .update(apiKeys)
      .set({ revokedAt: args.ctx.deps.clock() })
      .where(and(scope, isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (revoked.length === 0) return undefined;
    await recordAudit(tx, args.ctx, {
      action: "api_key.revoked",
      targetType: "api_key",
      targetId: existing.id,
    });
    // Every instance drops its cached copy of the key when this commits.
    return notifyAuthChanged(tx, args.ctx.deps, { organizationId: args.ctx.actor.organizationId });
  });
  await change?.delivered();
}
