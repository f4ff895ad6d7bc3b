import { z } from "@hono/zod-openapi";
import type { Deps } from "../../../deps.ts";
import { AppError } from "../../../errors.ts";
import { sendTelemetryAction } from "../../../features/agent-onboarding/next-actions.ts";
import type { NextAction } from "../../../features/agent-onboarding/schemas.ts";
import { walletOf } from "../../../features/agent-onboarding/wallet.ts";
import { walletScope } from "../../../features/agent-onboarding/wallet-environment.ts";
import { chooseProblem } from "../../../features/remediations/choose-problem.ts";
import { startRemediation } from "../../../features/remediations/start-remediation.ts";
import { hasTelemetry } from "../../../features/telemetry/queries/has-telemetry.ts";
import { formatUsd } from "../../../platform/payments/prices.ts";
import { parseJsonBody } from "../parse-input.ts";
import { paymentOf } from "../payment-gate.ts";
import type { X402Route } from "../route.ts";
import { pollAction, StartedSchema } from "./actions.ts";

const ResolveInput = z
  .object({
    environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
    problemId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "The problem to fix. Default: the most recently seen open or regressed problem no run is working on",
      ),
    x_assumed_state: z.string().max(8192).optional(),
  })
  .strict();

function readsFirst(deps: Deps, environmentId: string): NextAction[] {
  const read = formatUsd(deps.payments.prices.read);
  return [
    {
      action: "list_problems",
      method: "GET",
      href: `${deps.config.baseUrl}/x402/problems?environmentId=${environmentId}`,
      price: read,
      description: "The environment's problems and their remediation state.",
    },
    {
      action: "check_health",
      method: "GET",
      href: `${deps.config.baseUrl}/x402/services?environmentId=${environmentId}`,
      price: read,
      description: "Health of your services: request rate, error rate and latency percentiles.",
    },
  ];
}

/**
 * The guided flow's shortcut (spec 4D): once telemetry arrives, "fix what is wrong" without
 * listing and inspecting first. Picks the problem (or takes the named one) and starts the same
 * run as `POST /x402/problems/{id}/remediations`. Refusals (no telemetry yet, nothing open, a
 * run already working) are 409s with next_actions, and — answers ≥ 400 never settle — free.
 */
export const resolveRoute: X402Route = {
  method: "POST",
  path: "/x402/resolve",
  description:
    "Shortcut once telemetry is flowing: start a remediation of the most pressing open problem (or the one named) — investigation, a fix in a sandbox, the tests, a pull request for a human. Returns remediationId, threadUrl, status and the problem chosen.",
  paid: { price: "remediation", input: ResolveInput, output: StartedSchema },
  caller: "wallet",
  async handle(c, ctx) {
    const deps = c.get("deps");
    const input = await parseJsonBody(c, ResolveInput);
    const payment = paymentOf(c);
    const scope = await walletScope(deps, walletOf(payment), input.environmentId);
    if (!input.problemId && !(await hasTelemetry(deps.db, scope.environmentId))) {
      throw new AppError(
        "telemetry_required",
        "No telemetry has arrived in this environment yet, so there is nothing to resolve; nothing was charged. Send traces and logs first.",
        { next_actions: [sendTelemetryAction(deps)] },
      );
    }
    const chosen = input.problemId
      ? { id: input.problemId }
      : await chooseProblem(deps.db, scope.environmentId);
    if (!chosen) {
      throw new AppError(
        "nothing_to_resolve",
        "No open or regressed problem without a run in this environment; nothing was charged.",
        { next_actions: readsFirst(deps, scope.environmentId) },
      );
    }
    const started = await startRemediation({
      deps,
      organizationId: scope.organizationId,
      environmentId: scope.environmentId,
      problemId: chosen.id,
      requestedBy: `wallet:${payment.network}:${payment.payer.toLowerCase()}`,
    });
    return c.json({ ...started, next_actions: [pollAction(deps, started.remediationId)] }, 201);
  },
};
