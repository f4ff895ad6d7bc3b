import { and, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { githubInstallations, repositories } from "../../platform/db/schema/repositories.ts";
import { findEnvironment, findInEnvironment } from "../environments/index.ts";
import type { Repository } from "./schemas.ts";

export type RepositoryRow = typeof repositories.$inferSelect;
type RepositoryRef = { environmentId: string; repositoryId: string };

export const toRepository = (row: RepositoryRow): Repository => ({
  id: row.id,
  environmentId: row.environmentId,
  provider: row.provider,
  ...(row.path !== null ? { path: row.path } : {}),
  ...(row.installationId !== null ? { installationId: row.installationId } : {}),
  ...(row.fullName !== null ? { fullName: row.fullName } : {}),
  defaultBranch: row.defaultBranch,
  testCommand: row.testCommand,
  services: row.services,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
});

/** Tenancy gate: the caller's organisation and exactly that environment, else 404. */
export const findRepository = (db: Db, ctx: ServiceContext, ref: RepositoryRef): Promise<RepositoryRow> =>
  findInEnvironment(db, ctx, repositories, {
    environmentId: ref.environmentId,
    id: ref.repositoryId,
    what: "Repository",
  });

export async function getRepository(args: {
  ctx: ServiceContext;
  input: RepositoryRef;
}): Promise<Repository> {
  requirePermission(args.ctx, "repositories:read");
  return toRepository(await findRepository(args.ctx.deps.db, args.ctx, args.input));
}

/** The environment's registered repositories, oldest first. */
export async function listRepositories(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Repository[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "repositories:read");
  const { ctx, input } = args;
  const env = await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  return readPage(ctx.deps.db, repositories, { environmentId: env.id }, input, toRepository);
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

/** Whether a GitHub App installation is linked to the caller's organisation. */
export async function isLinkedInstallation(ctx: ServiceContext, installationId: number): Promise<boolean> {
  const [row] = await ctx.deps.db
    .select({ id: githubInstallations.installationId })
    .from(githubInstallations)
    .where(
      and(
        eq(githubInstallations.installationId, installationId),
        eq(githubInstallations.organizationId, ctx.actor.organizationId),
      ),
    );
  return row !== undefined;
}

/** The repositories a linked installation may read (the selection made on GitHub), to register. */
export async function listInstallationRepositories(args: {
  ctx: ServiceContext;
  input: { installationId: number };
}): Promise<{ items: { fullName: string; defaultBranch: string }[] }> {
  const { ctx, input } = args;
  requirePermission(ctx, "repositories:read");
  const github = ctx.deps.remediation.github;
  if (!github) throw new AppError("provider_unavailable", "No GitHub App is configured on this service.");
  if (!(await isLinkedInstallation(ctx, input.installationId))) {
    throw new AppError(
      "not_found",
      `Installation ${input.installationId} is not linked to your organisation.`,
    );
  }
  return { items: await github.listRepositories(input.installationId) };
}
