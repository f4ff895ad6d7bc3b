import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import type { Db } from "../../db/client.ts";
import { environments } from "../../db/schema/environments.ts";
import { AppError } from "../../errors.ts";

/**
 * The tenancy gate for everything under an environment: the row is looked up together with the
 * caller's organisation, so another organisation's environment is indistinguishable from a
 * missing one (404, never 403). `forUpdate` locks the row inside a transaction.
 */
export async function findEnvironment(
  db: Db,
  ctx: ServiceContext,
  environmentId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<typeof environments.$inferSelect> {
  const query = db
    .select()
    .from(environments)
    .where(and(eq(environments.id, environmentId), eq(environments.organizationId, ctx.actor.organizationId)))
    .limit(1);
  const [row] = opts.forUpdate ? await query.for("update") : await query;
  if (!row) throw new AppError("not_found", `Environment ${environmentId} was not found.`);
  return row;
}
