import { z } from "zod";
import type { Deps } from "../../deps.ts";
import { onboardingStates } from "../../platform/db/schema/onboarding-sessions.ts";
import { formatUsd, type PriceKey } from "../../platform/payments/prices.ts";
import { singleLineText } from "../../schemas.ts";

/**
 * A suggested next call (DESIGN §7), shared by every /x402 answer, best first in every
 * `next_actions` list. `x_assumed_state`, when present, is echoed back so a suggestion made for a
 * state that has since changed is refused before any payment.
 */
const NextActionSchema = z.object({
  action: z.string().describe("What the call does, e.g. start_onboarding"),
  method: z.enum(["GET", "POST"]),
  href: z.url(),
  price: z.string().describe('"$0.05" or "free"'),
  description: z.string(),
  body: z.record(z.string(), z.unknown()).optional().describe("The JSON body to send"),
  x_assumed_state: z
    .string()
    .optional()
    .describe(
      "Echo it in the X-Assumed-State header (or the body field) of the call: a stale suggestion is refused before payment",
    ),
});
export const NextActionsSchema = z.array(NextActionSchema);
export type NextAction = z.infer<typeof NextActionSchema>;

/**
 * How the free reads (onboarding, runs, threads) are called, for descriptions: either way works,
 * and the wallet's way never expires (DESIGN §9 "Wallet reads").
 */
export const FREE_READ_HOW =
  "with `Authorization: Bearer <session token>` (from POST /x402/onboard), or as the paying wallet: sign the sign-in-with-x challenge of the 402 answer and send it in `SIGN-IN-WITH-X`";

/**
 * A next action: `route` is the method and a path on this server (or an absolute URL, such as an
 * approval link), priced by its class or free.
 */
export function nextAction(
  deps: Pick<Deps, "config" | "payments">,
  route: `${"GET" | "POST"} ${string}`,
  price: PriceKey | "free",
  { action, ...rest }: Omit<NextAction, "method" | "href" | "price">,
): NextAction {
  const method = route.slice(0, route.indexOf(" ")) as "GET" | "POST";
  const target = route.slice(method.length + 1);
  const href = target.startsWith("/") ? `${deps.config.baseUrl}${target}` : target;
  return {
    action,
    method,
    href,
    price: price === "free" ? price : formatUsd(deps.payments.prices[price]),
    ...rest,
  };
}

/**
 * What a human has to do for an agent (spec 1B: claim the organisation, install the source-hosting
 * app, select repositories, approve a high-risk change, review and merge the pull request), in
 * order, each on its own: an operator sees which one is missing.
 */
export const operatorStepNames = [
  "claim_organization",
  "install_app",
  "select_repositories",
  "approve_change",
  "review_pull_request",
] as const;
export const operatorStepStatuses = ["done", "pending", "upcoming", "not_needed"] as const;

export const OperatorStepSchema = z.object({
  step: z.enum(operatorStepNames),
  status: z
    .enum(operatorStepStatuses)
    .describe(
      "done: a human did it; pending: waiting for a human now (see url); upcoming: not actionable yet (an earlier step is pending, or the run has not reached it); not_needed: nothing to do here",
    ),
  done: z.boolean().describe("status is done or not_needed (kept for clients of the two-step list)"),
  url: z.url().optional().describe("While pending: where the human does it"),
  description: z.string().describe("What the human does, in a sentence"),
});
export type OperatorStep = z.infer<typeof OperatorStepSchema>;
export type OperatorStepName = (typeof operatorStepNames)[number];
export const OperatorStepsSchema = z.array(OperatorStepSchema);

/** The optional echo of a suggestion's assumed state; checked before payment, ignored after. */
const assumedState = z.string().max(8192).optional();

export const SignupInputSchema = z
  .object({
    organizationName: singleLineText(100).optional().describe("Default: the wallet address"),
    environmentName: singleLineText(64).optional().describe("Default: production"),
    x_assumed_state: assumedState,
  })
  .strict();
export type SignupInput = z.infer<typeof SignupInputSchema>;

export const SignupResultSchema = z.object({
  organization: z.object({
    id: z.string(),
    name: z.string(),
    wallet: z.object({ address: z.string(), network: z.string() }),
  }),
  environment: z.object({ id: z.uuid(), name: z.string() }),
  publishableKey: z.object({
    id: z.string(),
    key: z.string().describe("pk_…: telemetry ingest only, safe to embed; shown in this answer only"),
  }),
  telemetry: z.object({
    endpoint: z.url().describe("OTLP/HTTP base URL: /v1/traces, /v1/logs, /v1/metrics"),
    protocol: z.literal("http/protobuf").describe("http/json works too"),
    headers: z.record(z.string(), z.string()),
    env: z.record(z.string(), z.string()).describe("The standard OTEL_EXPORTER_OTLP_* variables"),
  }),
  next_actions: NextActionsSchema,
});
export type SignupResult = z.infer<typeof SignupResultSchema>;

export const OnboardInputSchema = z
  .object({
    environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
    x_assumed_state: assumedState,
  })
  .strict();
export type OnboardInput = z.infer<typeof OnboardInputSchema>;

export const OnboardingSessionSchema = z.object({
  sessionId: z.string(),
  state: z.enum(onboardingStates),
  organizationId: z.string(),
  environmentId: z.uuid(),
  createdAt: z.iso.datetime(),
  stateChangedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  approvalUrl: z.url().optional().describe("Present while a human operator must approve"),
  operatorSteps: OperatorStepsSchema.optional().describe(
    "Present while a human operator must act: claim_organization, install_app (not_needed without a GitHub App or with a repository on this machine), select_repositories. The approval link leads them through each.",
  ),
  next_actions: NextActionsSchema,
});
export type OnboardingSession = z.infer<typeof OnboardingSessionSchema>;

export const StartedOnboardingSchema = OnboardingSessionSchema.extend({
  sessionToken: z
    .string()
    .describe(
      "Shown once. Send it as `Authorization: Bearer <token>` to poll GET /x402/onboard/{sessionId} for free",
    ),
});
export type StartedOnboarding = z.infer<typeof StartedOnboardingSchema>;
