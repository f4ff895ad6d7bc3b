import { eq } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import type { RepositoryRow } from "../repositories/to-repository.ts";
import type { SourceHost } from "../source-hosting/source-host.ts";
import type { RemediationRow } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";

/** The source host a repository's provider names. */
export function hostFor(services: RemediationServices, repo: RepositoryRow): SourceHost {
  if (repo.provider === "local-git") return services.localGit;
  if (!services.github) {
    throw new AppError("provider_unavailable", "The GitHub App is not configured on this service.");
  }
  return services.github.host;
}

/** The run's repository registration; undefined before the run has one, or once it was removed. */
export async function runRepository(db: Db, run: RemediationRow): Promise<RepositoryRow | undefined> {
  if (!run.repositoryId) return undefined;
  const [repo] = await db.select().from(repositories).where(eq(repositories.id, run.repositoryId));
  return repo;
}
