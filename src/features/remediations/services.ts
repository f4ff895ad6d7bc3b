import { eq } from "drizzle-orm";
import type { Config } from "../../config.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import { createSandbox } from "../../platform/sandbox/create-sandbox.ts";
import type { Sandbox } from "../../platform/sandbox/sandbox.ts";
import type { GithubIntegration, SourceHost } from "../source-hosting/index.ts";
import { githubIntegration, localGitHost } from "../source-hosting/index.ts";
import type { RemediationEvidence } from "./evidence.ts";

/** Everything remediation reaches besides the database: evidence, the sandbox, source hosting. */
export type RemediationServices = {
  evidence: RemediationEvidence;
  sandbox: Sandbox;
  localGit: SourceHost;
  /** Undefined when no GitHub App is configured. */
  github: GithubIntegration | undefined;
  /**
   * Resumes runs waiting for a repository, in the registering transaction: through `deps`, so
   * repositories need not import remediation (which reads repositories, not the reverse).
   */
  resumeRunsAwaitingRepository: (
    tx: Db,
    args: { environmentId: string; services: string[]; repositoryId: string; fullName: string | null },
  ) => Promise<void>;
};

/** The services from configuration around `evidence` (the telemetry store, in production). */
export function createRemediationServices(args: {
  config: Config;
  logger: Logger;
  evidence: RemediationEvidence;
  resumeRunsAwaitingRepository: RemediationServices["resumeRunsAwaitingRepository"];
}): RemediationServices {
  const { config } = args;
  return {
    resumeRunsAwaitingRepository: args.resumeRunsAwaitingRepository,
    evidence: args.evidence,
    sandbox: createSandbox({
      mode: config.remediation.sandbox,
      nodeEnv: config.nodeEnv,
      logger: args.logger,
      // Only a service with a model runs repository code: its log says at start which isolation.
      probeNow: config.model !== undefined,
    }),
    localGit: localGitHost({ baseUrl: config.baseUrl }),
    github: config.remediation.github ? githubIntegration(config.remediation.github) : undefined,
  };
}

/** The source host a repository's provider names. */
export function hostFor(services: RemediationServices, repo: { provider: string }): SourceHost {
  if (repo.provider === "local-git") return services.localGit;
  if (!services.github) {
    throw new AppError("provider_unavailable", "The GitHub App is not configured on this service.");
  }
  return services.github.host;
}

/** The run's repository registration; undefined before the run has one, or once it was removed. */
export async function runRepository(db: Db, run: { repositoryId: string | null }) {
  if (!run.repositoryId) return undefined;
  const [repo] = await db.select().from(repositories).where(eq(repositories.id, run.repositoryId));
  return repo;
}
