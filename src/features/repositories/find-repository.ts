import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { RepositoryRow } from "./to-repository.ts";

/** Tenancy gate: the caller's organisation and exactly that environment, else 404. */
export async function findRepository(
  db: Db,
  ctx: ServiceContext,
  ref: { environmentId: string; repositoryId: string },
): Promise<RepositoryRow> {
  await findEnvironment(db, ctx, ref.environmentId);
  const [row] = await db
    .select()
    .from(repositories)
    .where(
      and(
        eq(repositories.id, ref.repositoryId),
        eq(repositories.environmentId, ref.environmentId),
        eq(repositories.organizationId, ctx.actor.organizationId),
      ),
    )
    .limit(1);
  if (!row)
    throw new AppError("not_found", `Repository ${ref.repositoryId} was not found in this environment.`);
  return row;
}

/** The repository that fixes a service's problems in an environment, if one is registered. */
export async function repositoryForService(
  db: Db,
  scope: { organizationId: string; environmentId: string },
  service: string,
): Promise<RepositoryRow | undefined> {
  const rows = await db
    .select()
    .from(repositories)
    .where(
      and(
        eq(repositories.environmentId, scope.environmentId),
        eq(repositories.organizationId, scope.organizationId),
      ),
    );
  return rows.find((row) => row.services.includes(service));
}
