import { eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findEnvironment } from "../environments/index.ts";
import { checkLocalRepository } from "./local-repository.ts";
import { isLinkedInstallation, toRepository } from "./read-repositories.ts";
import type { CreateRepositoryInput, Repository } from "./schemas.ts";

/**
 * Registers a repository for remediation (humans only: it needs an owner or admin API key; the
 * x402 agent routes cannot reach this verb). Checks run before the transaction: a local path
 * must be a git work tree's top level with its default branch, a GitHub repository must be
 * reachable through an installation of this organisation. Runs of the environment that were
 * waiting for repository access are resumed in the same transaction.
 */
export async function createRepository(args: {
  ctx: ServiceContext;
  input: { environmentId: string } & CreateRepositoryInput;
}): Promise<Repository> {
  const { ctx, input } = args;
  const member = requireOwnerOrAdmin(ctx, "repositories:manage");
  await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  const services = ctx.deps.remediation;
  const settings = ctx.deps.config.remediation;

  let location: {
    path: string | null;
    installationId: number | null;
    fullName: string | null;
    defaultBranch: string;
  };
  if (input.provider === "local-git") {
    if (!settings.localGitEnabled) {
      throw new AppError(
        "provider_unavailable",
        "local-git repositories are disabled in production unless PATCHBAY_LOCAL_GIT_ROOTS names where they may live.",
      );
    }
    const path = await checkLocalRepository({
      path: input.path,
      defaultBranch: input.defaultBranch,
      roots: settings.localGitRoots,
    });
    location = { path, installationId: null, fullName: null, defaultBranch: input.defaultBranch };
  } else {
    const github = services.github;
    if (!github) {
      throw new AppError(
        "provider_unavailable",
        "No GitHub App is configured (PATCHBAY_GITHUB_APP_ID and friends).",
      );
    }
    if (!(await isLinkedInstallation(ctx, input.installationId))) {
      throw new AppError(
        "installation_required",
        "This GitHub App installation is not linked to your organisation; install the App through patchbay's install link first.",
        { installationId: input.installationId },
      );
    }
    const remote = await github.getRepository({
      installationId: input.installationId,
      fullName: input.fullName,
    });
    location = {
      path: null,
      installationId: input.installationId,
      fullName: remote.fullName,
      defaultBranch: input.defaultBranch ?? remote.defaultBranch,
    };
  }

  return withTransaction(ctx, async (tx) => {
    // The environment row lock serialises registrations, so a service maps to one repository.
    const env = await findEnvironment(tx, ctx, input.environmentId, { forUpdate: true });
    const existing = await tx.select().from(repositories).where(eq(repositories.environmentId, env.id));
    const same = existing.find((r) =>
      location.path !== null ? r.path === location.path : r.fullName === location.fullName,
    );
    if (same) {
      throw new AppError("repository_taken", "This repository is already registered in this environment.", {
        repositoryId: same.id,
      });
    }
    for (const service of input.services) {
      const owner = existing.find((r) => r.services.includes(service));
      if (owner) {
        throw new AppError(
          "service_taken",
          `Service "${service}" already maps to repository ${owner.id}; delete that registration first.`,
          { service, repositoryId: owner.id },
        );
      }
    }
    const [row] = await tx
      .insert(repositories)
      .values({
        id: newId("rep"),
        organizationId: env.organizationId,
        environmentId: env.id,
        provider: input.provider,
        ...location,
        testCommand: input.testCommand,
        services: input.services,
        createdBy: member.userId,
        createdAt: ctx.deps.clock(),
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, ctx, {
      action: "repository.created",
      targetType: "repository",
      targetId: row.id,
      environmentId: env.id,
      details: { environmentId: env.id, provider: row.provider, services: row.services },
    });
    await ctx.deps.remediation.resumeRunsAwaitingRepository(tx, {
      environmentId: env.id,
      services: row.services,
      repositoryId: row.id,
      fullName: row.fullName,
    });
    return toRepository(row);
  });
}
