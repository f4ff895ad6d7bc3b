import { z } from "@hono/zod-openapi";
import { NextActionsSchema } from "../../../features/agent-onboarding/schemas.ts";
import { walletOf } from "../../../features/agent-onboarding/wallet.ts";
import { walletScope } from "../../../features/agent-onboarding/wallet-environment.ts";
import { startInstrumentation } from "../../../features/remediations/start-instrumentation.ts";
import { parseJsonBody } from "../parse-input.ts";
import { paymentOf } from "../payment-gate.ts";
import type { X402Route } from "../route.ts";
import { pollAction } from "./actions.ts";

const InstrumentationInput = z
  .object({
    service: z
      .string()
      .trim()
      .min(1)
      .max(256)
      .describe(
        "The service to instrument (its OpenTelemetry `service.name`); the repository is the one a human mapped to it",
      ),
    environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
  })
  .strict();

const StartedSchema = z.object({
  remediationId: z.string(),
  threadUrl: z.url(),
  status: z.literal("queued"),
  service: z.string(),
  next_actions: NextActionsSchema,
});

/**
 * `POST /x402/instrumentation/pr` (spec 4D): a pull request adding OpenTelemetry to a service's
 * repository. A run of kind `instrumentation`, polled like a remediation at
 * `GET /x402/remediations/{id}`; without a repository for the service it waits for a human.
 */
export const instrumentationRoute: X402Route = {
  method: "POST",
  path: "/x402/instrumentation/pr",
  description:
    "Ask for a pull request that adds OpenTelemetry instrumentation (OTLP exporters configured from the environment) to a service's repository; poll it like a remediation.",
  paid: {
    price: "instrumentation",
    input: InstrumentationInput,
    inputExample: { service: "checkout" },
    output: StartedSchema,
  },
  caller: "wallet",
  async handle(c, ctx) {
    const deps = c.get("deps");
    const input = await parseJsonBody(c, InstrumentationInput);
    const payment = paymentOf(c);
    const scope = await walletScope(deps, walletOf(payment), input.environmentId);
    const started = await startInstrumentation({
      deps,
      organizationId: scope.organizationId,
      environmentId: scope.environmentId,
      service: input.service,
      requestedBy: `wallet:${payment.network}:${payment.payer.toLowerCase()}`,
    });
    return c.json({ ...started, next_actions: [pollAction(deps, started.remediationId)] }, 201);
  },
};
