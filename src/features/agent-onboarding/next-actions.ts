import { and, asc, eq, gt } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { chooseProblem, startRefusal } from "../remediations/index.ts";
import { approvalUrl } from "./approval.ts";
import { type AssumptionKind, assumeState, stateDigest } from "./assumed-state.ts";
import { operatorStepAction } from "./operator-steps.ts";
import { assumeProblem } from "./problem-assumption.ts";
import { FREE_READ_HOW, type NextAction, nextAction, type OnboardingSession } from "./schemas.ts";

type ActionDeps = Pick<
  Deps,
  "config" | "keyring" | "payments" | "db" | "clock" | "languageModel" | "remediation"
>;

/** The facts "start onboarding" rests on: which sessions are open (a new one makes it stale). */
async function onboardingDigest(deps: ActionDeps, organizationId: string): Promise<string> {
  const open = await activeSessions(deps.db, organizationId, deps.clock());
  return stateDigest(open.map((s) => s.id));
}

/** `onboarding:<organisation id>`: "start onboarding" assumed the organisation's open sessions. */
export const onboardingAssumption: AssumptionKind = {
  digest: onboardingDigest,
  nextActions: organizationActions,
};

export function sendTelemetryAction(deps: ActionDeps): NextAction {
  return nextAction(deps, "POST /v1/traces", "free", {
    action: "send_telemetry",
    description:
      "Export OpenTelemetry traces (and logs to /v1/logs) over OTLP/HTTP with the publishable key: `Authorization: Bearer pk_…`, or set OTEL_EXPORTER_OTLP_ENDPOINT to the base URL and OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20pk_….",
  });
}

export async function startOnboardingAction(
  deps: ActionDeps,
  organizationId: string,
  environmentId: string,
): Promise<NextAction> {
  const subject = `onboarding:${organizationId}`;
  const digest = await onboardingDigest(deps, organizationId);
  return nextAction(deps, "POST /x402/onboard", "onboard", {
    action: "start_onboarding",
    description:
      "Start a guided onboarding session: it tracks telemetry arriving and the human approval patchbay needs, and returns a session token (shown once) for free polling.",
    body: { environmentId },
    x_assumed_state: assumeState(deps.keyring, { subject, digest }, deps.clock()),
  });
}

const pollOnboardingAction = (deps: ActionDeps, sessionId: string) =>
  nextAction(deps, `GET /x402/onboard/${sessionId}`, "free", {
    action: "poll_onboarding",
    description: `Poll the onboarding session for free ${FREE_READ_HOW}; every few seconds is plenty.`,
  });

/** The reads that show an environment's state: its services' health and its problems. */
export const healthAction = (deps: ActionDeps, environmentId: string) =>
  nextAction(deps, `GET /x402/services?environmentId=${environmentId}`, "read", {
    action: "check_health",
    description: "Health of your services: request rate, error rate and latency percentiles.",
  });

export const problemsAction = (deps: ActionDeps, environmentId: string, description: string) =>
  nextAction(deps, `GET /x402/problems?environmentId=${environmentId}`, "read", {
    action: "list_problems",
    description,
  });

/** The next steps of an onboarding session as it stands, best first. */
export async function sessionActions(
  deps: ActionDeps,
  session: Omit<OnboardingSession, "next_actions">,
): Promise<NextAction[]> {
  switch (session.state) {
    case "awaiting-telemetry":
      return [sendTelemetryAction(deps), pollOnboardingAction(deps, session.sessionId)];
    case "awaiting-operator":
      // The link of the step a human must take now (each step in operatorSteps has its state).
      return [
        operatorStepAction(deps, session.operatorSteps ?? []) ??
          nextAction(deps, `GET ${approvalUrl(deps, session.sessionId)}`, "free", {
            action: "request_operator_approval",
            description: "A human must act: give this link to your operator; keep polling meanwhile.",
          }),
        pollOnboardingAction(deps, session.sessionId),
      ];
    case "ready": {
      const ready = [
        healthAction(deps, session.environmentId),
        problemsAction(
          deps,
          session.environmentId,
          "Problems detected in your telemetry, most recent first.",
        ),
      ];
      // The shortcut for the problem `POST /x402/resolve` would pick, assuming that problem's
      // state; not offered while no run can start here (it would only answer 503).
      if (startRefusal(deps)) return ready;
      const problem = await chooseProblem(deps.db, session.environmentId);
      if (!problem) return ready;
      return [
        ...ready,
        nextAction(deps, "POST /x402/resolve", "remediation", {
          action: "resolve",
          description: `Shortcut: start a remediation of "${problem.title}" (${problem.count} occurrences in ${problem.service}) — a fix, the repository's tests and a pull request for a human. Poll it for free with your session token or your wallet signed in.`,
          body: { environmentId: session.environmentId, problemId: problem.id },
          x_assumed_state: assumeProblem(deps, problem),
        }),
      ];
    }
    case "expired":
      return [await startOnboardingAction(deps, session.organizationId, session.environmentId)];
  }
}

/** What a wallet organisation should do next when no particular session is in view. */
export async function organizationActions(deps: ActionDeps, organizationId: string): Promise<NextAction[]> {
  const latest = (await activeSessions(deps.db, organizationId, deps.clock())).at(-1);
  if (latest) return [pollOnboardingAction(deps, latest.id), sendTelemetryAction(deps)];
  const environmentId = await firstEnvironmentId(deps.db, organizationId);
  if (!environmentId) return [];
  return [await startOnboardingAction(deps, organizationId, environmentId), sendTelemetryAction(deps)];
}

/** Sessions of the organisation that have not expired, oldest first. */
function activeSessions(db: Db, organizationId: string, now: Date) {
  return db
    .select({ id: onboardingSessions.id })
    .from(onboardingSessions)
    .where(and(eq(onboardingSessions.organizationId, organizationId), gt(onboardingSessions.expiresAt, now)))
    .orderBy(onboardingSessions.createdAt, onboardingSessions.id);
}

export async function firstEnvironmentId(db: Db, organizationId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.organizationId, organizationId))
    .orderBy(asc(environments.createdAt), asc(environments.id))
    .limit(1);
  return row?.id;
}
