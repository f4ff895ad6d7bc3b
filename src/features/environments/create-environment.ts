import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newUuid } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { isUniqueViolation } from "../../platform/db/errors.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { type Environment, toEnvironment } from "./schemas.ts";

export async function createEnvironment(args: {
  ctx: ServiceContext;
  input: { name: string };
}): Promise<Environment> {
  requireOwnerOrAdmin(args.ctx, "environments:manage");
  const now = args.ctx.deps.clock();
  return withTransaction(args.ctx, async (tx) => {
    const [row] = await tx
      .insert(environments)
      .values({
        id: newUuid(),
        organizationId: args.ctx.actor.organizationId,
        name: args.input.name,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .catch((error: unknown) => rethrowNameTaken(error, args.input.name));
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, args.ctx, {
      action: "environment.created",
      targetType: "environment",
      targetId: row.id,
      environmentId: row.id,
      details: { name: row.name },
    });
    return toEnvironment(row);
  });
}

/** Maps the (organisation, name) unique violation to a clear 409; rethrows anything else. */
export function rethrowNameTaken(error: unknown, name: string): never {
  if (isUniqueViolation(error)) {
    throw new AppError("name_taken", `An environment named "${name}" already exists in this organisation.`);
  }
  throw error;
}
