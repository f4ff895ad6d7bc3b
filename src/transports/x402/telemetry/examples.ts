import type { NextAction } from "../../../features/agent-onboarding/schemas.ts";
import type { Problem, ProblemPage } from "../../../features/telemetry/problems/schemas.ts";
import type { LogPage, ServiceHealthPage, Trace } from "../../../features/telemetry/queries/schemas.ts";
import { EXAMPLE_ENVIRONMENT, EXAMPLE_PROBLEM, EXAMPLE_TRACE, exampleUrl } from "../examples.ts";

// The paid reads' output examples (a test holds each to its route's output schema).

const ENVIRONMENT = EXAMPLE_ENVIRONMENT;
const PROBLEM = EXAMPLE_PROBLEM.id;
const TRACE = EXAMPLE_TRACE;
const TITLE = EXAMPLE_PROBLEM.title;

const listProblems: NextAction = {
  action: "list_problems",
  method: "GET",
  href: exampleUrl(`/x402/problems?environmentId=${ENVIRONMENT}`),
  price: "$0.01",
  description: "Problems detected in your telemetry, most recent first.",
};

const getTrace: NextAction = {
  action: "get_trace",
  method: "GET",
  href: exampleUrl(`/x402/traces/${TRACE}?environmentId=${ENVIRONMENT}`),
  price: "$0.01",
  description: "The span tree of a trace in which this problem occurred.",
};

export const serviceHealthExample = {
  window: "1h",
  from: "2026-11-22T09:15:00.000Z",
  to: "2026-11-22T10:15:00.000Z",
  items: [
    {
      service: "checkout",
      lastSeen: "2026-11-22T10:14:59.120Z",
      requestCount: 5400,
      requestRate: 1.5,
      errorCount: 42,
      errorRate: 0.0078,
      latencyMs: { p50: 12.4, p95: 88.1, p99: 240.7 },
    },
  ],
  nextCursor: null,
  next_actions: [listProblems],
} satisfies ServiceHealthPage & { next_actions: NextAction[] };

export const logPageExample = {
  items: [
    {
      id: "log_8b0d2f4h6k8m0p2r4t6v8x0z",
      time: "2026-11-22T10:14:59.120Z",
      severity: "error",
      severityNumber: 17,
      severityText: "ERROR",
      body: "GET /cart/1041/total failed: Cannot read properties of undefined (reading 'sku')",
      service: "checkout",
      traceId: TRACE,
      spanId: "00f067aa0ba902b7",
      eventName: null,
      scope: "checkout.http",
      attributes: { "http.route": "/cart/:id/total" },
    },
  ],
  nextCursor: null,
  next_actions: [listProblems],
} satisfies LogPage & { next_actions: NextAction[] };

export const traceExample = {
  traceId: TRACE,
  spanCount: 2,
  truncated: false,
  startTime: "2026-11-22T10:14:59.100Z",
  endTime: "2026-11-22T10:14:59.121Z",
  durationMs: 21,
  services: ["checkout"],
  spans: [
    {
      spanId: "00f067aa0ba902b7",
      parentSpanId: null,
      depth: 0,
      service: "checkout",
      name: "GET /cart/:id/total",
      kind: "server",
      startTime: "2026-11-22T10:14:59.100Z",
      endTime: "2026-11-22T10:14:59.121Z",
      durationMs: 21,
      status: { code: "error", message: "Cannot read properties of undefined (reading 'sku')" },
      scope: "@opentelemetry/instrumentation-http",
      attributes: { "http.route": "/cart/:id/total", "http.response.status_code": 500 },
      resourceAttributes: { "service.name": "checkout" },
      events: [
        {
          name: "exception",
          time: "2026-11-22T10:14:59.119Z",
          attributes: { "exception.type": "TypeError" },
        },
      ],
      links: [],
    },
    {
      spanId: "53995c3f42cd8ad8",
      parentSpanId: "00f067aa0ba902b7",
      depth: 1,
      service: "checkout",
      name: "SELECT cart_lines",
      kind: "client",
      startTime: "2026-11-22T10:14:59.104Z",
      endTime: "2026-11-22T10:14:59.111Z",
      durationMs: 7,
      status: { code: "unset", message: null },
      scope: "@opentelemetry/instrumentation-pg",
      attributes: { "db.system": "postgresql" },
      resourceAttributes: { "service.name": "checkout" },
      events: [],
      links: [],
    },
  ],
  next_actions: [listProblems],
} satisfies Trace & { next_actions: NextAction[] };

const summary = {
  id: PROBLEM,
  fingerprint: "sha256:9f2c4e6a8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a",
  title: TITLE,
  culprit: "priceLine (cart/price-line.ts)",
  service: "checkout",
  exceptionType: "TypeError",
  status: "open",
  count: 42,
  firstSeen: "2026-11-22T09:12:00.000Z",
  lastSeen: "2026-11-22T10:14:59.120Z",
  revision: 1,
  remediationId: null,
  remediationState: null,
} as const;

export const problemPageExample = {
  items: [summary],
  nextCursor: null,
  next_actions: [
    {
      action: "inspect_problem",
      method: "GET",
      href: exampleUrl(`/x402/problems/${PROBLEM}?environmentId=${ENVIRONMENT}`),
      price: "$0.01",
      description: `Stack trace, sample traces and remediation state of "${TITLE}" (42 occurrences).`,
    },
  ],
} satisfies ProblemPage & { next_actions: NextAction[] };

export const problemExample = {
  ...summary,
  sampleTraceIds: [TRACE],
  sampleMessage: "Cannot read properties of undefined (reading 'sku') for order 1041",
  stackTrace:
    "TypeError: Cannot read properties of undefined (reading 'sku')\n    at priceLine (/app/src/cart/price-line.ts:41:23)",
  frames: [{ function: "priceLine", file: "/app/src/cart/price-line.ts", inApp: true }],
  logCount: 40,
  sampleLogMessage: "checkout failed",
  resolvedAt: null,
  statusChangedAt: null,
  next_actions: [
    {
      action: "remediate",
      method: "POST",
      href: exampleUrl(`/x402/problems/${PROBLEM}/remediations`),
      price: "$5.00",
      description:
        "Start a remediation: patchbay investigates, fixes it in a sandbox, runs the repository's tests and opens a pull request for a human to review. Poll it for free with your session token.",
      body: { environmentId: ENVIRONMENT },
      x_assumed_state:
        "1.eyJzIjoicHJvYmxlbTpwcmJfM2g1azdtOXAxcjN0NXY3eDl6MWIzZDVmIn0.Rk2w9Qe4Tn7Lb1Xs5Vh8Pz3Cm6Yd0Fa",
    },
    getTrace,
  ],
} satisfies Problem & { next_actions: NextAction[] };
