import { and, count, eq, isNull } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { findEnvironment } from "../environments/index.ts";
import { generatePublishableKey, newPublishableKeyId } from "./key-value.ts";
import { type PublishableKey, toPublishableKey } from "./schemas.ts";

/** Live (unrevoked) keys per environment: enough to rotate per app, few enough to audit. */
export const MAX_ACTIVE_PUBLISHABLE_KEYS = 20;

/**
 * Creates a publishable key for one environment. The key is returned once and stored only
 * hashed; the environment row lock serialises concurrent creates against the limit.
 */
export async function createPublishableKey(args: {
  ctx: ServiceContext;
  input: { environmentId: string; name: string };
}): Promise<{ publishableKey: PublishableKey; key: string }> {
  const member = requireOwnerOrAdmin(args.ctx, "publishable_keys:manage");
  const generated = generatePublishableKey();
  return withTransaction(args.ctx, async (tx) => {
    const env = await findEnvironment(tx, args.ctx, args.input.environmentId, { forUpdate: true });
    const [active] = await tx
      .select({ n: count() })
      .from(publishableKeys)
      .where(and(eq(publishableKeys.environmentId, env.id), isNull(publishableKeys.revokedAt)));
    const current = active?.n ?? 0;
    if (current >= MAX_ACTIVE_PUBLISHABLE_KEYS) {
      throw new AppError(
        "limit_exceeded",
        `An environment holds at most ${MAX_ACTIVE_PUBLISHABLE_KEYS} active publishable keys; revoke one first.`,
        { limit: MAX_ACTIVE_PUBLISHABLE_KEYS, current, requested: 1 },
      );
    }
    const [row] = await tx
      .insert(publishableKeys)
      .values({
        id: newPublishableKeyId(),
        organizationId: env.organizationId,
        environmentId: env.id,
        name: args.input.name,
        prefix: generated.prefix,
        keyHash: generated.hash,
        createdBy: member.userId,
        createdAt: args.ctx.deps.clock(),
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, args.ctx, {
      action: "publishable_key.created",
      targetType: "publishable_key",
      targetId: row.id,
      environmentId: env.id,
      details: { environmentId: env.id, name: row.name, prefix: row.prefix },
    });
    return { publishableKey: toPublishableKey(row), key: generated.key };
  });
}
