import type { SignupResult, StartedOnboarding } from "../../../features/agent-onboarding/schemas.ts";
import { EXAMPLE_ENVIRONMENT as ENVIRONMENT, exampleUrl } from "../examples.ts";

// The onboarding routes' output examples (a test holds each to its route's output schema).

const ORGANIZATION = "org_7m2k9qv4xw1c8d3f5h6j0n2p";
const PUBLISHABLE_KEY = "pk_5w8e2r4t6y1u3i5o7p9a2s4d6f8g";
const ASSUMED_STATE =
  "1.eyJzIjoib25ib2FyZGluZzpvcmdfN20yazlxdjR4dzFjOGQzZjVoNmowbjJwIn0.q9Xh2V4b7Nn0Qe3Lk8s1Zr5Tw6Ym0Pc";

const sendTelemetry = {
  action: "send_telemetry",
  method: "POST",
  href: exampleUrl("/v1/traces"),
  price: "free",
  description:
    "Export OpenTelemetry traces (and logs to /v1/logs) over OTLP/HTTP with the publishable key: `Authorization: Bearer pk_…`.",
} as const;

export const signupExample = {
  organization: {
    id: ORGANIZATION,
    name: "Acme agents",
    wallet: { address: "0x5b38da6a701c568545dcfcb03fcb875f56beddc4", network: "eip155:8453" },
  },
  environment: { id: ENVIRONMENT, name: "production" },
  publishableKey: { id: "pbk_2d4f6h8k0m2p4r6t8v0x2z4b", key: PUBLISHABLE_KEY },
  telemetry: {
    endpoint: exampleUrl(""),
    protocol: "http/protobuf",
    headers: { authorization: `Bearer ${PUBLISHABLE_KEY}` },
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: exampleUrl(""),
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${PUBLISHABLE_KEY}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    },
  },
  next_actions: [
    {
      action: "start_onboarding",
      method: "POST",
      href: exampleUrl("/x402/onboard"),
      price: "$0.05",
      description:
        "Start a guided onboarding session: it tracks telemetry arriving and the human approval patchbay needs, and returns a session token (shown once) for free polling.",
      body: { environmentId: ENVIRONMENT },
      x_assumed_state: ASSUMED_STATE,
    },
    sendTelemetry,
  ],
} satisfies SignupResult;

const SESSION = "obs_9c1e3g5j7l9n1q3s5u7w9y1a";

export const startedOnboardingExample = {
  sessionId: SESSION,
  state: "awaiting-telemetry",
  organizationId: ORGANIZATION,
  environmentId: ENVIRONMENT,
  createdAt: "2026-11-22T09:00:00.000Z",
  stateChangedAt: "2026-11-22T09:00:00.000Z",
  expiresAt: "2026-11-23T09:00:00.000Z",
  sessionToken: "obt_4k6m8p0r2t4v6x8z0b2d4f6h8k0m2p4r",
  next_actions: [
    sendTelemetry,
    {
      action: "poll_onboarding",
      method: "GET",
      href: exampleUrl(`/x402/onboard/${SESSION}`),
      price: "free",
      description:
        "Poll the onboarding session with `Authorization: Bearer <session token>` (the token from POST /x402/onboard); every few seconds is plenty.",
    },
  ],
} satisfies StartedOnboarding;
