import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import type { Db } from "../../platform/db/client.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findInEnvironment } from "../environments/find-environment.ts";
import type { RepositoryRow } from "./to-repository.ts";

/** Tenancy gate: the caller's organisation and exactly that environment, else 404. */
export const findRepository = (
  db: Db,
  ctx: ServiceContext,
  ref: { environmentId: string; repositoryId: string },
): Promise<RepositoryRow> =>
  findInEnvironment(db, ctx, repositories, {
    environmentId: ref.environmentId,
    id: ref.repositoryId,
    what: "Repository",
  });

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
