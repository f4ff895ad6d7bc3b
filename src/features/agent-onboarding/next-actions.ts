import type { Deps } from "../../deps.ts";
import type { OnboardingState } from "../../platform/db/schema/onboarding-sessions.ts";
import { formatUsd, type PriceKey } from "../../platform/payments/prices.ts";
import { chooseProblem } from "../remediations/choose-problem.ts";
import { assumeProblem } from "../remediations/problem-assumption.ts";
import { assumeState, stateDigest } from "./assumed-state.ts";
import type { NextAction } from "./next-action.ts";
import { activeSessions, type OperatorStep } from "./organization-progress.ts";

type ActionDeps = Pick<Deps, "config" | "keyring" | "payments" | "db" | "clock">;

const priceOf = (deps: ActionDeps, key: PriceKey) => formatUsd(deps.payments.prices[key]);

/** Subject of the assumption behind "start onboarding": the organisation's open sessions. */
export const onboardingSubject = (organizationId: string) => `onboarding:${organizationId}`;

/** The facts "start onboarding" rests on: which sessions are open (a new one makes it stale). */
export async function onboardingDigest(deps: ActionDeps, organizationId: string): Promise<string> {
  const open = await activeSessions(deps.db, organizationId, deps.clock());
  return stateDigest(open.map((s) => s.id));
}

export function sendTelemetryAction(deps: ActionDeps): NextAction {
  return {
    action: "send_telemetry",
    method: "POST",
    href: `${deps.config.baseUrl}/v1/traces`,
    price: "free",
    description:
      "Export OpenTelemetry traces (and logs to /v1/logs) over OTLP/HTTP with the publishable key: `Authorization: Bearer pk_…`, or set OTEL_EXPORTER_OTLP_ENDPOINT to the base URL and OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20pk_….",
  };
}

export async function startOnboardingAction(
  deps: ActionDeps,
  organizationId: string,
  environmentId: string,
): Promise<NextAction> {
  return {
    action: "start_onboarding",
    method: "POST",
    href: `${deps.config.baseUrl}/x402/onboard`,
    price: priceOf(deps, "onboard"),
    description:
      "Start a guided onboarding session: it tracks telemetry arriving and the human approval patchbay needs, and returns a session token (shown once) for free polling.",
    body: { environmentId },
    x_assumed_state: assumeState(
      deps.keyring,
      { subject: onboardingSubject(organizationId), digest: await onboardingDigest(deps, organizationId) },
      deps.clock(),
    ),
  };
}

export function pollOnboardingAction(deps: ActionDeps, sessionId: string): NextAction {
  return {
    action: "poll_onboarding",
    method: "GET",
    href: `${deps.config.baseUrl}/x402/onboard/${sessionId}`,
    price: "free",
    description:
      "Poll the onboarding session with `Authorization: Bearer <session token>` (the token from POST /x402/onboard); every few seconds is plenty.",
  };
}

function operatorRequest(steps: OperatorStep[] | undefined): string {
  const claimed = steps?.find((s) => s.step === "claim_organization")?.done ?? false;
  return claimed
    ? "A human must connect a repository: give this link to your operator. They install the source-hosting app and select the repository (or register it) so patchbay can propose fixes; keep polling meanwhile."
    : "A human must approve: give this link to your operator. They sign in to patchbay, claim the organisation and connect a repository; keep polling meanwhile.";
}

/** The next steps of an onboarding session in `state`, best first. */
export async function sessionActions(
  deps: ActionDeps,
  session: {
    id: string;
    organizationId: string;
    environmentId: string;
    approvalUrl: string;
    operatorSteps?: OperatorStep[] | undefined;
  },
  state: OnboardingState,
): Promise<NextAction[]> {
  switch (state) {
    case "awaiting-telemetry":
      return [sendTelemetryAction(deps), pollOnboardingAction(deps, session.id)];
    case "awaiting-operator":
      return [
        {
          action: "request_operator_approval",
          method: "GET",
          href: session.approvalUrl,
          price: "free",
          description: operatorRequest(session.operatorSteps),
        },
        pollOnboardingAction(deps, session.id),
      ];
    case "ready":
      return [
        ...readyActions(deps, session.environmentId),
        ...(await resolveActions(deps, session.environmentId)),
      ];
    case "expired":
      return [await startOnboardingAction(deps, session.organizationId, session.environmentId)];
  }
}

function readyActions(deps: ActionDeps, environmentId: string): NextAction[] {
  return [
    {
      action: "check_health",
      method: "GET",
      href: `${deps.config.baseUrl}/x402/services?environmentId=${environmentId}`,
      price: priceOf(deps, "read"),
      description: "Health of your services: request rate, error rate and latency percentiles.",
    },
    {
      action: "list_problems",
      method: "GET",
      href: `${deps.config.baseUrl}/x402/problems?environmentId=${environmentId}`,
      price: priceOf(deps, "read"),
      description: "Problems detected in your telemetry, most recent first.",
    },
  ];
}

/** The shortcut (`POST /x402/resolve`) for the problem it would pick, assuming that problem's state. */
async function resolveActions(deps: ActionDeps, environmentId: string): Promise<NextAction[]> {
  const problem = await chooseProblem(deps.db, environmentId);
  if (!problem) return [];
  return [
    {
      action: "resolve",
      method: "POST",
      href: `${deps.config.baseUrl}/x402/resolve`,
      price: priceOf(deps, "remediation"),
      description: `Shortcut: start a remediation of "${problem.title}" (${problem.count} occurrences in ${problem.service}) — a fix, the repository's tests and a pull request for a human. Poll it for free with your session token.`,
      body: { environmentId, problemId: problem.id },
      x_assumed_state: assumeProblem(deps, problem),
    },
  ];
}

/** What a wallet organisation should do next when no particular session is in view. */
export async function organizationActions(
  deps: ActionDeps,
  org: { id: string; environmentId: string },
): Promise<NextAction[]> {
  const open = await activeSessions(deps.db, org.id, deps.clock());
  const latest = open.at(-1);
  if (latest) return [pollOnboardingAction(deps, latest.id), sendTelemetryAction(deps)];
  return [await startOnboardingAction(deps, org.id, org.environmentId), sendTelemetryAction(deps)];
}
