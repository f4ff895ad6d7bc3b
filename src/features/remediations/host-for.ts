import { AppError } from "../../errors.ts";
import type { RepositoryRow } from "../repositories/to-repository.ts";
import type { SourceHost } from "../source-hosting/source-host.ts";
import type { RemediationServices } from "./services.ts";

/** The source host a repository's provider names. */
export function hostFor(services: RemediationServices, repo: RepositoryRow): SourceHost {
  if (repo.provider === "local-git") return services.localGit;
  if (!services.github) {
    throw new AppError("provider_unavailable", "The GitHub App is not configured on this service.");
  }
  return services.github.host;
}
