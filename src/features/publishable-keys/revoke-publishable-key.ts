import { and, eq, isNull } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { findEnvironment } from "../environments/index.ts";

/**
 * Revokes a key; the next telemetry request carrying it is refused (keys are not cached, see
 * resolve-publishable-key.ts). Revoking an already revoked key succeeds and changes nothing.
 */
export async function revokePublishableKey(args: {
  ctx: ServiceContext;
  input: { environmentId: string; keyId: string };
}): Promise<void> {
  requireOwnerOrAdmin(args.ctx, "publishable_keys:manage");
  await withTransaction(args.ctx, async (tx) => {
    const env = await findEnvironment(tx, args.ctx, args.input.environmentId);
    const scope = and(eq(publishableKeys.id, args.input.keyId), eq(publishableKeys.environmentId, env.id));
    const [existing] = await tx.select({ id: publishableKeys.id }).from(publishableKeys).where(scope);
    if (!existing) throw new AppError("not_found", `Publishable key ${args.input.keyId} was not found.`);
    const revoked = await tx
      .update(publishableKeys)
      .set({ revokedAt: args.ctx.deps.clock() })
      .where(and(scope, isNull(publishableKeys.revokedAt)))
      .returning({ id: publishableKeys.id });
    if (revoked.length === 0) return;
    await recordAudit(tx, args.ctx, {
      action: "publishable_key.revoked",
      targetType: "publishable_key",
      targetId: existing.id,
      environmentId: env.id,
      details: { environmentId: env.id },
    });
  });
}
