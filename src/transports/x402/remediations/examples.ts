import type { z } from "@hono/zod-openapi";
import { EXAMPLE_PROBLEM, exampleUrl } from "../examples.ts";
import type { StartedInstrumentationSchema, StartedSchema } from "./actions.ts";

// The paid starts' output examples (a test holds each to its route's output schema).

const poll = (remediationId: string) => ({
  action: "poll_remediation",
  method: "GET" as const,
  href: exampleUrl(`/x402/remediations/${remediationId}`),
  price: "free",
  description:
    "Poll every few seconds until `prUrl` appears or the run ends; free with the session token (`Authorization: Bearer`, from POST /x402/onboard) or the paying wallet signed in (`SIGN-IN-WITH-X`).",
});

const RUN = "rem_6n8q0s2u4w6y8a0c2e4g6j8m";

/** A claimed organisation with its repository connected: the human's next step is the review. */
const operatorSteps = (remediationId: string) => [
  {
    step: "claim_organization" as const,
    status: "done" as const,
    done: true,
    description: "Claim the organisation.",
  },
  {
    step: "install_app" as const,
    status: "done" as const,
    done: true,
    description: "Install the GitHub App.",
  },
  {
    step: "select_repositories" as const,
    status: "done" as const,
    done: true,
    description: "Select the repository in the App's installation.",
  },
  {
    step: "approve_change" as const,
    status: "not_needed" as const,
    done: true,
    description: "Approve a high-risk change (only when the run asks).",
  },
  {
    step: "review_pull_request" as const,
    status: "upcoming" as const,
    done: false,
    description: `Review and merge the pull request of ${remediationId}.`,
  },
];

export const startedExample = {
  remediationId: RUN,
  threadUrl: exampleUrl(`/remediations/${RUN}`),
  threadApiUrl: exampleUrl(`/x402/remediations/${RUN}/thread`),
  status: "queued",
  problem: EXAMPLE_PROBLEM,
  operatorSteps: operatorSteps(RUN),
  next_actions: [poll(RUN)],
} satisfies z.output<typeof StartedSchema>;

const INSTRUMENTATION_RUN = "rem_1p3r5t7v9x1z3b5d7f9h1k3m";

export const startedInstrumentationExample = {
  remediationId: INSTRUMENTATION_RUN,
  threadUrl: exampleUrl(`/remediations/${INSTRUMENTATION_RUN}`),
  threadApiUrl: exampleUrl(`/x402/remediations/${INSTRUMENTATION_RUN}/thread`),
  status: "queued",
  service: "checkout",
  operatorSteps: operatorSteps(INSTRUMENTATION_RUN),
  next_actions: [poll(INSTRUMENTATION_RUN)],
} satisfies z.output<typeof StartedInstrumentationSchema>;
