import type { Deps } from "../../deps.ts";
import { createSandbox } from "../sandbox/create-sandbox.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { githubIntegration } from "../source-hosting/github/github-app.ts";
import type { GithubIntegration } from "../source-hosting/github/github-integration.ts";
import { localGitHost } from "../source-hosting/local-git-host.ts";
import type { SourceHost } from "../source-hosting/source-host.ts";
import type { RemediationEvidence } from "./evidence.ts";
import { telemetryEvidence } from "./telemetry-evidence.ts";

/** Everything remediation reaches besides the database: evidence, the sandbox, source hosting. */
export type RemediationServices = {
  /** The problem store and log/trace queries (the telemetry store; tests may give their own). */
  evidence: RemediationEvidence;
  sandbox: Sandbox;
  localGit: SourceHost;
  /** Undefined when no GitHub App is configured. */
  github: GithubIntegration | undefined;
};

const built = new WeakMap<Deps, RemediationServices>();

/**
 * `deps.remediation` when given (tests), otherwise built once per `deps` from configuration,
 * with the telemetry store as evidence.
 */
export function remediationServices(deps: Deps): RemediationServices {
  if (deps.remediation) return deps.remediation;
  let services = built.get(deps);
  if (!services) {
    services = buildRemediationServices(deps);
    built.set(deps, services);
  }
  return services;
}

/**
 * The services from configuration, with `overrides` (tests swap in their own evidence or
 * sandbox).
 */
export function buildRemediationServices(
  deps: Deps,
  overrides: Partial<RemediationServices> = {},
): RemediationServices {
  return {
    evidence: telemetryEvidence(deps),
    sandbox: createSandbox({
      mode: deps.config.remediation.sandbox,
      nodeEnv: deps.config.nodeEnv,
      logger: deps.logger,
    }),
    localGit: localGitHost({ baseUrl: deps.config.baseUrl }),
    github: deps.config.remediation.github ? githubIntegration(deps.config.remediation.github) : undefined,
    ...overrides,
  };
}
