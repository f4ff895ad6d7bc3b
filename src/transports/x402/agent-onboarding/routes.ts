import { readOnboardingSession } from "../../../features/agent-onboarding/read-onboarding-session.ts";
import {
  OnboardInputSchema,
  SignupInputSchema,
  SignupResultSchema,
  StartedOnboardingSchema,
} from "../../../features/agent-onboarding/schemas.ts";
import { bearerToken } from "../../../features/agent-onboarding/session-organization.ts";
import { signUpWallet } from "../../../features/agent-onboarding/sign-up-wallet.ts";
import { startOnboarding } from "../../../features/agent-onboarding/start-onboarding.ts";
import { walletOf } from "../../../features/agent-onboarding/wallet.ts";
import { parseJsonBody } from "../parse-input.ts";
import { paymentOf } from "../payment-gate.ts";
import type { X402Route } from "../route.ts";

// Answers carry what is shown once (a publishable key, a session token): never cached.
const noStore = { "cache-control": "no-store" };

export const onboardingRoutes: X402Route[] = [
  {
    method: "POST",
    path: "/x402/signup",
    description:
      "Create a wallet-backed organisation for the paying wallet, with a first environment and a publishable key for OpenTelemetry. One organisation per wallet.",
    paid: { price: "signup", input: SignupInputSchema, output: SignupResultSchema },
    caller: "payer",
    async handle(c, ctx) {
      const input = await parseJsonBody(c, SignupInputSchema);
      const result = await signUpWallet({
        deps: c.get("deps"),
        wallet: walletOf(paymentOf(c)),
        input,
        requestId: c.get("requestId"),
      });
      return c.json(result, 201, noStore);
    },
  },
  {
    method: "POST",
    path: "/x402/onboard",
    description:
      "Start a guided onboarding session for the paying wallet's organisation. Returns the session token once; poll GET /x402/onboard/{sessionId} with it for free.",
    paid: { price: "onboard", input: OnboardInputSchema, output: StartedOnboardingSchema },
    caller: "wallet",
    async handle(c, ctx) {
      const input = await parseJsonBody(c, OnboardInputSchema);
      const result = await startOnboarding({
        deps: c.get("deps"),
        wallet: walletOf(paymentOf(c)),
        input,
        requestId: c.get("requestId"),
      });
      return c.json(result, 201, noStore);
    },
  },
  {
    method: "GET",
    path: "/x402/onboard/:sessionId",
    description:
      "Poll an onboarding session: its state, the approval link while a human is needed, next_actions.",
    auth: "Authorization: Bearer <session token>",
    caller: "session",
    async handle(c, ctx) {
      const sessionId = c.req.param("sessionId") ?? "";
      const token = bearerToken(c.req.header("authorization"));
      const session = await readOnboardingSession({ deps: c.get("deps"), sessionId, token });
      return c.json(session, 200, noStore);
    },
  },
];
