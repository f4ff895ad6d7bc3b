import type { NextAction } from "../../../features/agent-onboarding/schemas.ts";
import type { Diagnosis } from "../../../features/diagnosis/schemas.ts";
import { EXAMPLE_ENVIRONMENT, EXAMPLE_PROBLEM, EXAMPLE_TRACE, exampleUrl } from "../examples.ts";

/** `POST /x402/diagnose`'s output example (a test holds it to the route's output schema). */
export const diagnosisExample = {
  summary: `The description matches "${EXAMPLE_PROBLEM.title}" in checkout (42 occurrences, open).`,
  confidence: "high",
  terms: ["checkout", "500", "cart", "total", "deploy"],
  window: "24h",
  evidence: {
    problems: [
      {
        ...EXAMPLE_PROBLEM,
        culprit: "priceLine (cart/price-line.ts)",
        status: "open",
        count: 42,
        lastSeen: "2026-11-22T10:14:59.120Z",
        remediationId: null,
        remediationState: null,
        matched: ["checkout", "cart"],
      },
    ],
    logs: [
      {
        time: "2026-11-22T10:14:59.120Z",
        service: "checkout",
        severity: "error",
        body: "GET /cart/1041/total failed: Cannot read properties of undefined (reading 'sku')",
        traceId: EXAMPLE_TRACE,
        matched: ["checkout", "cart", "total"],
      },
    ],
    services: [{ service: "checkout", requestCount: 5400, errorCount: 42, errorRate: 0.0078, p95Ms: 88.1 }],
  },
  next_actions: [
    {
      action: "inspect_problem",
      method: "GET",
      href: exampleUrl(`/x402/problems/${EXAMPLE_PROBLEM.id}?environmentId=${EXAMPLE_ENVIRONMENT}`),
      price: "$0.01",
      description: `Confirm: the stack trace and sample traces of "${EXAMPLE_PROBLEM.title}".`,
    },
    {
      action: "remediate",
      method: "POST",
      href: exampleUrl(`/x402/problems/${EXAMPLE_PROBLEM.id}/remediations`),
      price: "$5.00",
      description:
        "Fix it: patchbay investigates, changes the code in a sandbox, runs the repository's tests and opens a pull request for a human.",
      body: { environmentId: EXAMPLE_ENVIRONMENT },
      x_assumed_state:
        "1.eyJzIjoicHJvYmxlbTpwcmJfM2g1azdtOXAxcjN0NXY3eDl6MWIzZDVmIn0.Rk2w9Qe4Tn7Lb1Xs5Vh8Pz3Cm6Yd0Fa",
    },
  ],
} satisfies Diagnosis & { next_actions: NextAction[] };
