import type { Deps } from "../../../deps.ts";
import { sendTelemetryAction } from "../../../features/agent-onboarding/next-actions.ts";
import {
  pollRemediationAction,
  remediateAction,
} from "../../../features/agent-onboarding/problem-assumption.ts";
import {
  FREE_READ_HOW,
  type NextAction,
  NextActionsSchema,
  nextAction,
} from "../../../features/agent-onboarding/schemas.ts";
import { diagnoseIncident } from "../../../features/diagnosis/diagnose-incident.ts";
import { DiagnoseInputSchema, type Diagnosis, DiagnosisSchema } from "../../../features/diagnosis/schemas.ts";
import { workingStatuses } from "../../../features/remediations/run-state.ts";
import { hasTelemetry } from "../../../features/telemetry/queries/has-telemetry.ts";
import { parseJsonBody } from "../parse-input.ts";
import type { X402Route } from "../route.ts";
import { answeredEnvironment } from "../telemetry/routes.ts";
import { diagnosisExample } from "./examples.ts";

/** A run in one of these still works toward a fix: poll it rather than pay for another. */
const WORKING: readonly string[] = [...workingStatuses, "awaiting-approval"];

const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  ).toString();

/**
 * The next steps toward a diagnosis or a fix, cheapest first: polling a run already on it, reads
 * that confirm, and only then the paid remediation (refused for free if the problem moved on).
 */
function actionsFor(deps: Deps, environmentId: string, d: Diagnosis): NextAction[] {
  const get = (action: string, path: string, description: string) =>
    nextAction(deps, `GET ${path}`, "read", { action, description });
  const [problem] = d.evidence.problems;
  if (problem) {
    const actions: NextAction[] = [];
    if (problem.remediationId && WORKING.includes(problem.remediationState ?? "")) {
      actions.push(
        pollRemediationAction(
          deps,
          problem.remediationId,
          `A remediation already works on this problem (${problem.remediationState}); poll it for free ${FREE_READ_HOW}.`,
        ),
      );
    }
    actions.push(
      get(
        "inspect_problem",
        `/x402/problems/${problem.id}?environmentId=${environmentId}`,
        `Confirm: the stack trace and sample traces of "${problem.title}".`,
      ),
    );
    const remediable = problem.status === "open" || problem.status === "regressed";
    const remediate =
      remediable &&
      !actions.some((a) => a.action === "poll_remediation") &&
      remediateAction(
        deps,
        problem,
        environmentId,
        "Fix it: patchbay investigates, changes the code in a sandbox, runs the repository's tests and opens a pull request for a human.",
      );
    if (remediate) actions.push(remediate);
    return actions;
  }
  const [log] = d.evidence.logs;
  if (log?.traceId) {
    return [
      get(
        "get_trace",
        `/x402/traces/${log.traceId}?environmentId=${environmentId}`,
        "The span tree of a request that logged a matching error.",
      ),
      get(
        "search_logs",
        `/x402/logs?${query({ environmentId, service: log.service, severity: "error", q: log.matched[0] })}`,
        `Matching error logs of ${log.service}.`,
      ),
    ];
  }
  const [service] = d.evidence.services;
  const logs = get(
    "search_logs",
    `/x402/logs?${query({ environmentId, service: service?.service, severity: "error", q: log?.matched[0] })}`,
    service ? `Error logs of ${service.service}.` : "Recent error logs.",
  );
  const problems = get(
    "list_problems",
    `/x402/problems?${query({ environmentId, service: service?.service })}`,
    service ? `Problems detected in ${service.service}.` : "Problems detected in your telemetry.",
  );
  return service
    ? [problems, logs]
    : [
        get(
          "check_health",
          `/x402/services?environmentId=${environmentId}&window=${d.window}`,
          "Service health.",
        ),
        logs,
      ];
}

/** `POST /x402/diagnose` (spec 4D): an incident in words; what the telemetry says, and what next. */
export const diagnosisRoutes: X402Route[] = [
  {
    method: "POST",
    path: "/x402/diagnose",
    description:
      "Describe an incident in words; get what your telemetry says about it (matching problems, error logs, failing services) and the cheapest next action toward a diagnosis or a fix.",
    paid: {
      price: "diagnose",
      input: DiagnoseInputSchema,
      inputExample: { description: "checkout returns 500 on GET /orders/:id since the last deploy" },
      output: DiagnosisSchema.extend({ next_actions: NextActionsSchema }),
      outputExample: diagnosisExample,
    },
    caller: "wallet",
    async handle(c, ctx) {
      const input = await parseJsonBody(c, DiagnoseInputSchema);
      const diagnosis = await diagnoseIncident({ ctx, input });
      const environmentId = answeredEnvironment(ctx, input.environmentId);
      if (diagnosis.confidence === "none" && !(await hasTelemetry(ctx.deps.db, environmentId))) {
        const summary = "No telemetry has arrived in this environment yet: there is no evidence to read.";
        return c.json({ ...diagnosis, summary, next_actions: [sendTelemetryAction(ctx.deps)] });
      }
      return c.json({ ...diagnosis, next_actions: actionsFor(ctx.deps, environmentId, diagnosis) });
    },
  },
];
