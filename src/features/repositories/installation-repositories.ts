import { and, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { githubInstallations } from "../../platform/db/schema/repositories.ts";

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
