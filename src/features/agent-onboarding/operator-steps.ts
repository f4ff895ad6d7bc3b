import { and, desc, eq, gt } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import type { Remediation } from "../remediations/index.ts";
import {
  findReferencedRepository,
  linkedInstallation,
  parseRepositoryReference,
  type RepositoryRow,
  repositoryForService,
} from "../repositories/index.ts";
import { githubInstallUrl } from "../source-hosting/index.ts";
import { approvalUrl, isClaimed } from "./claim-link.ts";
import { type NextAction, nextAction, type OperatorStep, type OperatorStepName } from "./schemas.ts";

type StepDeps = Pick<Deps, "db" | "config" | "keyring" | "clock" | "remediation" | "payments">;
type Scope = { organizationId: string; environmentId: string };

/**
 * Which repository the setup steps are about: the one named (`owner/name` or `rep_…`), else the
 * service's, else any of the environment's.
 */
type Target = { name?: string | undefined; service?: string | undefined };

type Status = OperatorStep["status"];
const step = (
  name: OperatorStepName,
  status: Status,
  description: string,
  url?: string | undefined,
): OperatorStep => ({
  step: name,
  status,
  done: status === "done" || status === "not_needed",
  // Only a step a human can take now gets a link: an install link opened before the
  // organisation is claimed could only fail at GitHub's callback.
  ...(status === "pending" && url ? { url } : {}),
  description,
});

/**
 * The human steps an onboarding session waits for: claim the organisation, install the GitHub App,
 * select (register) a repository of the environment. Derived on every read.
 */
export function onboardingOperatorSteps(
  deps: StepDeps,
  session: Scope & { id: string },
): Promise<OperatorStep[]> {
  return setupSteps(deps, session, {}, approvalUrl(deps, session.id));
}

/**
 * The human steps of a run: the setup its repository needs (the one named, or the service's),
 * then approving a high-risk change and reviewing the pull request, as the run reaches them.
 */
export async function runOperatorSteps(
  deps: StepDeps,
  organizationId: string,
  run: Remediation,
): Promise<OperatorStep[]> {
  const scope = { organizationId, environmentId: run.environmentId };
  const target: Target = {
    name: run.repositoryId ?? run.requestedRepository ?? undefined,
    service: run.service ?? undefined,
  };
  const setup = await setupSteps(deps, scope, target, await claimLink(deps, scope.organizationId));
  return [...setup, approveChangeStep(run), reviewStep(run)];
}

/** The suggestion for the first step a human must take now, if any: its link, and what happens. */
export function operatorStepAction(deps: StepDeps, steps: OperatorStep[]): NextAction | undefined {
  const pending = steps.find((s) => s.status === "pending" && s.url);
  if (!pending?.url) return undefined;
  const review = pending.step === "review_pull_request";
  return nextAction(deps, `GET ${pending.url}`, "free", {
    action: review ? "request_review" : "request_operator_approval",
    description: `A human must act (${pending.step}): ${pending.description} Give them this link and keep polling; the state moves on by itself.`,
  });
}

async function setupSteps(
  deps: StepDeps,
  scope: Scope,
  target: Target,
  claimUrl: string | undefined,
): Promise<OperatorStep[]> {
  const claimed = await isClaimed(deps.db, scope.organizationId);
  const installationId = await linkedInstallation(deps.db, scope.organizationId);
  const repo = await targetRepository(deps, scope, target);
  const github = deps.remediation.github !== undefined;
  const named = target.name;
  // Only GitHub can hold an `owner/name` that is not registered yet.
  const wantsGithub = named !== undefined && !named.startsWith("rep_");
  const satisfied = {
    claim_organization: claimed,
    install_app:
      installationId !== undefined || !github || (repo !== undefined && repo.provider !== "github"),
    select_repositories: repo !== undefined,
  };
  // The first step left is the one to take now; those after it wait for it.
  const first = (Object.keys(satisfied) as (keyof typeof satisfied)[]).find((k) => !satisfied[k]);
  const status = (name: keyof typeof satisfied, notNeeded = false): Status =>
    satisfied[name] ? (notNeeded ? "not_needed" : "done") : name === first ? "pending" : "upcoming";
  const what = named ?? (target.service ? `the repository of service "${target.service}"` : "a repository");
  const select = new URL(
    `${deps.config.baseUrl}/orgs/${scope.organizationId}/environments/${scope.environmentId}/repositories/new`,
  );
  if (target.service) select.searchParams.set("service", target.service);
  if (wantsGithub) {
    select.searchParams.set("provider", "github");
    select.searchParams.set("fullName", named);
  }
  if (installationId !== undefined) select.searchParams.set("installationId", String(installationId));
  return [
    step(
      "claim_organization",
      status("claim_organization"),
      claimUrl
        ? "Sign in to patchbay through the approval link and claim the organisation (become its owner)."
        : "Claim the organisation through an onboarding session's approval link (POST /x402/onboard gives one).",
      claimUrl,
    ),
    step(
      "install_app",
      status("install_app", installationId === undefined),
      github
        ? `An owner or admin installs patchbay's GitHub App on the GitHub account that holds ${what} (the link works for an hour; each answer carries a fresh one)${wantsGithub ? "." : ", or registers a repository on patchbay's machine instead (local git)."}`
        : "No GitHub App is configured on this service: repositories are registered on patchbay's machine (local git).",
      github ? githubInstallUrl(deps, scope.organizationId)?.url : undefined,
    ),
    step(
      "select_repositories",
      status("select_repositories"),
      wantsGithub
        ? `An owner or admin gives the App access to ${what} on GitHub and registers it in patchbay, mapped to its services.`
        : `An owner or admin selects ${what} in patchbay (a GitHub repository the App can read, or a local git work tree), mapped to the services whose problems it fixes.`,
      select.toString(),
    ),
  ];
}

/** The registration the target names in the scope, if a human made it. */
async function targetRepository(
  deps: StepDeps,
  scope: Scope,
  target: Target,
): Promise<Pick<RepositoryRow, "provider"> | undefined> {
  if (target.name) return findReferencedRepository(deps.db, scope, parseRepositoryReference(target.name));
  if (target.service) return repositoryForService(deps.db, scope, target.service);
  const [row] = await deps.db
    .select({ provider: repositories.provider })
    .from(repositories)
    .where(
      and(
        eq(repositories.organizationId, scope.organizationId),
        eq(repositories.environmentId, scope.environmentId),
      ),
    )
    .limit(1);
  return row;
}

const ENDED = ["merged", "closed", "failed", "cancelled"];

/** Destructive or high-risk changes wait for an owner's or admin's approval (`risk.ts`). */
function approveChangeStep(run: Remediation): OperatorStep {
  const description =
    "An owner or admin reads the proposed change, which touches something risky, and approves or rejects it.";
  if (run.change && !run.change.risk.high) {
    return step(
      "approve_change",
      "not_needed",
      "The proposed change is not high-risk: no approval is needed.",
    );
  }
  if (run.change) {
    const waiting = run.status === "awaiting-approval" && run.approval?.kind === "high_risk_change";
    return step("approve_change", waiting ? "pending" : "done", description, run.approval?.approvalUrl);
  }
  return step("approve_change", ENDED.includes(run.status) ? "not_needed" : "upcoming", description);
}

/** The pull request is the review boundary: patchbay never merges. */
function reviewStep(run: Remediation): OperatorStep {
  const description = "A person reviews the pull request and merges or closes it; patchbay never merges.";
  if (run.status === "merged" || run.status === "closed")
    return step("review_pull_request", "done", description);
  if (run.status === "awaiting-review") {
    return step("review_pull_request", "pending", description, run.prUrl ?? undefined);
  }
  return step("review_pull_request", ENDED.includes(run.status) ? "not_needed" : "upcoming", description);
}

/** The approval link of the organisation's newest open onboarding session: claiming needs one. */
async function claimLink(deps: StepDeps, organizationId: string): Promise<string | undefined> {
  const [session] = await deps.db
    .select({ id: onboardingSessions.id })
    .from(onboardingSessions)
    .where(
      and(
        eq(onboardingSessions.organizationId, organizationId),
        gt(onboardingSessions.expiresAt, deps.clock()),
      ),
    )
    .orderBy(desc(onboardingSessions.createdAt), desc(onboardingSessions.id))
    .limit(1);
  return session ? approvalUrl(deps, session.id) : undefined;
}
