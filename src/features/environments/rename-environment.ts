import { and, eq, sql } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { rethrowNameTaken } from "./create-environment.ts";
import { findEnvironment } from "./find-environment.ts";
import { type Environment, toEnvironment } from "./schemas.ts";

/**
 * Renames an environment. The row lock plus the revision compare make concurrent PATCHes with
 * the same If-Match serialise: exactly one wins, the others see the new revision and get 412.
 */
export async function renameEnvironment(args: {
  ctx: ServiceContext;
  input: { environmentId: string; revision: number; name: string };
}): Promise<Environment> {
  requireOwnerOrAdmin(args.ctx, "environments:manage");
  return withTransaction(args.ctx, async (tx) => {
    const current = await findEnvironment(tx, args.ctx, args.input.environmentId, { forUpdate: true });
    if (current.revision !== args.input.revision) {
      throw new AppError(
        "revision_conflict",
        "The environment changed since you read it; read it again and retry with the current revision.",
        { currentRevision: current.revision },
      );
    }
    const [row] = await tx
      .update(environments)
      .set({
        name: args.input.name,
        revision: sql`${environments.revision} + 1`,
        updatedAt: args.ctx.deps.clock(),
      })
      .where(and(eq(environments.id, current.id), eq(environments.revision, current.revision)))
      .returning()
      .catch((error: unknown) => rethrowNameTaken(error, args.input.name));
    if (!row) throw new Error("locked row vanished during update");
    await recordAudit(tx, args.ctx, {
      action: "environment.renamed",
      targetType: "environment",
      targetId: row.id,
      environmentId: row.id,
      details: { from: current.name, to: row.name, revision: row.revision },
    });
    return toEnvironment(row);
  });
}
