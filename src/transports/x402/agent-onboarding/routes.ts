import {
  OnboardInputSchema,
  SignupInputSchema,
  SignupResultSchema,
  StartedOnboardingSchema,
} from "../../../features/agent-onboarding/schemas.ts";
import { readOnboardingSession, startOnboarding } from "../../../features/agent-onboarding/sessions.ts";
import { signUpWallet } from "../../../features/agent-onboarding/sign-up.ts";
import { FREE_READ_AUTH } from "../free-read-access.ts";
import { parseJsonBody } from "../parse-input.ts";
import type { X402Route } from "../route.ts";
import { signupExample, startedOnboardingExample } from "./examples.ts";

// Answers carry what is shown once (a publishable key, a session token): never cached.
const noStore = { "cache-control": "no-store" };

export const onboardingRoutes: X402Route[] = [
  {
    method: "POST",
    path: "/x402/signup",
    description:
      "Create a wallet-backed organisation for the paying wallet, with a first environment and a publishable key for OpenTelemetry. One organisation per wallet.",
    paid: {
      price: "signup",
      input: SignupInputSchema,
      output: SignupResultSchema,
      outputExample: signupExample,
    },
    caller: "payer",
    async handle(c, ctx) {
      const input = await parseJsonBody(c, SignupInputSchema);
      return c.json(await signUpWallet({ ctx, input }), 201, noStore);
    },
  },
  {
    method: "POST",
    path: "/x402/onboard",
    description:
      "Start a guided onboarding session for the paying wallet's organisation. Returns the session token once; poll GET /x402/onboard/{sessionId} for free with it, or with the wallet signed in.",
    paid: {
      price: "onboard",
      input: OnboardInputSchema,
      output: StartedOnboardingSchema,
      outputExample: startedOnboardingExample,
    },
    caller: "wallet",
    async handle(c, ctx) {
      const input = await parseJsonBody(c, OnboardInputSchema);
      return c.json(await startOnboarding({ ctx, input }), 201, noStore);
    },
  },
  {
    method: "GET",
    path: "/x402/onboard/:sessionId",
    description:
      "Poll an onboarding session: its state, the approval link while a human is needed, next_actions.",
    auth: FREE_READ_AUTH,
    caller: "reader",
    async handle(c, ctx) {
      const input = { sessionId: c.req.param("sessionId") ?? "" };
      return c.json(await readOnboardingSession({ ctx, input }), 200, noStore);
    },
  },
];
