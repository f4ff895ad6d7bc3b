import type { LanguageModel } from "ai";
import { createApp } from "../../src/app.ts";
import type { Deps } from "../../src/deps.ts";
import { memoryEvidence } from "../../src/features/remediations/evidence.ts";
import { registerRemediationWorker } from "../../src/features/remediations/run-step.ts";
import type { RemediationServices } from "../../src/features/remediations/services.ts";
import { telemetryEvidence } from "../../src/features/remediations/telemetry-evidence.ts";
import { localGitHost } from "../../src/features/source-hosting/local-git-host.ts";
import { createSandbox } from "../../src/platform/sandbox/create-sandbox.ts";
import type { Tenant } from "../fixtures.ts";
import { type Client, client } from "../http.ts";
import { type GitRepo, makeGitRepo } from "./git-repo.ts";
import { call, lastToolResults, scriptedModel } from "./scripted-model.ts";

/** The buggy module: `"ORD-000123".slice(3)` is "-000123", so every order id parses negative. */
export const BUGGY = `// Order ids look like "ORD-000123"; the numeric part is the database key.
export function parseOrderId(id) {
  if (typeof id !== "string" || !id.startsWith("ORD-")) {
    throw new Error(\`invalid order id: \${id}\`);
  }
  return Number(id.slice(3));
}
`;

export const FIXED = BUGGY.replace("Number(id.slice(3))", 'Number(id.slice("ORD-".length))');

export const fixtureFiles = {
  "package.json": `${JSON.stringify({ name: "checkout", private: true, type: "module", scripts: { test: "node --test" } }, null, 2)}\n`,
  "src/order-id.js": BUGGY,
  "src/orders.js": `import { parseOrderId } from "./order-id.js";

const orders = new Map([[123, { id: 123, total: 4200 }]]);

export function findOrder(orderId) {
  const key = parseOrderId(orderId);
  const order = orders.get(key);
  if (!order) throw new Error(\`order \${key} not found\`);
  return order;
}
`,
  "test/order-id.test.js": `import assert from "node:assert/strict";
import { test } from "node:test";
import { parseOrderId } from "../src/order-id.js";
import { findOrder } from "../src/orders.js";

test("parses the numeric part of an order id", () => {
  assert.equal(parseOrderId("ORD-000123"), 123);
});

test("finds an order by its id", () => {
  assert.equal(findOrder("ORD-000123").total, 4200);
});

test("rejects ids without the prefix", () => {
  assert.throws(() => parseOrderId("000123"), /invalid order id/);
});
`,
};

export const PROBLEM_ID = "prb_orderid0parse0negative0";
export const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

/** What the problem store would hold for the bug: the problem, a log line, a trace. */
export function fixtureEvidence(environmentId: string) {
  return memoryEvidence({
    problems: [
      {
        environmentId,
        id: PROBLEM_ID,
        title: "Error: order -123 not found",
        service: "checkout",
        status: "open",
        culprit: "findOrder (src/orders.js)",
        exceptionType: "Error",
        message: "order -123 not found",
        stackTrace:
          "Error: order -123 not found\n    at findOrder (src/orders.js:8:23)\n    at GET /orders/:id (src/server.js:14:10)",
        sampleTraceIds: [TRACE_ID],
        count: 57,
      },
    ],
    logs: [
      {
        environmentId,
        timestamp: "2026-11-22T03:59:58.000Z",
        severity: "ERROR",
        body: "GET /orders/ORD-000123 failed: order -123 not found",
        service: "checkout",
        traceId: TRACE_ID,
      },
    ],
    traces: [
      {
        environmentId,
        traceId: TRACE_ID,
        spans: [
          {
            spanId: "00f067aa0ba902b7",
            name: "GET /orders/:id",
            service: "checkout",
            startTime: "2026-11-22T03:59:58.000Z",
            durationMs: 3,
            status: "error",
            attributes: { "http.route": "/orders/:id", "url.path": "/orders/ORD-000123" },
            events: [{ name: "exception", attributes: { "exception.message": "order -123 not found" } }],
          },
        ],
      },
    ],
  });
}

export type Harness = {
  deps: Deps;
  services: RemediationServices;
  /** Swap the model the worker uses (the worker keeps this deps object). */
  setModel(model: LanguageModel): void;
  /** Points the evidence at `owner`'s environment and makes a fresh fixture repository. */
  forTenant(owner: Tenant): { api: Client; repo: GitRepo };
  /** The app on these deps (REST verbs then see the model and the services). */
  app: ReturnType<typeof createApp>;
};

const harnesses = new WeakMap<Deps, Harness>();
const repos: GitRepo[] = [];

/** Removes the fixture repositories made so far (call from afterAll). */
export function removeFixtureRepos(): void {
  for (const r of repos.splice(0)) r.remove();
}

/**
 * One per test file's deps: remediation services with the fixture's evidence and a real
 * sandbox, and (unless `worker: false`) one remediation worker on the file's real queue.
 */
export async function remediationHarness(base: Deps, opts: { worker?: boolean } = {}): Promise<Harness> {
  const existing = harnesses.get(base);
  if (existing) return existing;
  const services: RemediationServices = {
    ...base.remediation,
    evidence: memoryEvidence({}),
    sandbox: createSandbox({ mode: "auto", nodeEnv: "test", logger: base.logger }),
    localGit: localGitHost({ baseUrl: base.config.baseUrl }),
    github: undefined,
  };
  const deps: Deps = { ...base, remediation: services };
  if (opts.worker !== false) await registerRemediationWorker(deps, { concurrency: 1 });
  const app = createApp(deps);
  const harness: Harness = {
    deps,
    app,
    services,
    setModel(model) {
      deps.languageModel = model;
    },
    forTenant(owner) {
      services.evidence = fixtureEvidence(owner.environmentId);
      const repo = makeGitRepo(fixtureFiles);
      repos.push(repo);
      return { api: client(app, owner.apiKey), repo };
    },
  };
  harnesses.set(base, harness);
  return harness;
}

/**
 * A harness whose agent reads the telemetry store (problems made from real OTLP) and whose model
 * plays `turns` — for tests that go through ingest rather than the fixture evidence.
 */
export async function telemetryHarness(
  base: Deps,
  turns: Parameters<typeof scriptedModel>[0],
): Promise<Harness> {
  const h = await remediationHarness(base);
  h.services.evidence = telemetryEvidence(() => h.deps);
  h.setModel(scriptedModel(turns).model);
  return h;
}

type Out = { outcome?: string; exitCode?: number; [k: string]: unknown };
/** The last tool result's JSON value. */
export const lastOutput = (o: Parameters<typeof lastToolResults>[0]): Out =>
  ((lastToolResults(o).at(-1)?.output as { value?: unknown } | undefined)?.value ?? {}) as Out;

/**
 * A realistic investigation: the problem, its sample trace and logs, the code, a failing test
 * run, the fix, a passing test run, finish. Each turn checks what the previous tool returned,
 * as a model reading the results would.
 */
export function investigationScript(opts: { fix?: string } = {}) {
  return [
    call("get_problem"),
    (o: Parameters<typeof lastToolResults>[0]) => {
      const out = lastOutput(o) as { problem?: { sampleTraceIds?: string[] } };
      return call("get_trace", { traceId: out.problem?.sampleTraceIds?.[0] ?? "missing" });
    },
    call("search_logs", { query: "ORD-000123" }),
    call("search_files", { query: "parseOrderId" }),
    call("read_file", { path: "src/order-id.js" }),
    call("run_tests"),
    (o: Parameters<typeof lastToolResults>[0]) => {
      if (lastOutput(o).exitCode === 0) throw new Error("the base should fail its tests");
      return call("write_file", { path: "src/order-id.js", content: opts.fix ?? FIXED });
    },
    call("run_tests"),
    (o: Parameters<typeof lastToolResults>[0]) =>
      call("finish", {
        summary:
          lastOutput(o).exitCode === 0
            ? 'parseOrderId sliced 3 characters off "ORD-000123" and kept the dash, so ids parsed negative; it now slices the whole "ORD-" prefix.'
            : "I could not make the tests pass.",
        // The repository already has a test that fails with the problem: the reproduction it found.
        reproduction: { tests: ["test/order-id.test.js"] },
      }),
  ];
}

export const INSTRUMENTATION_FILE = `// Loaded before the app: node --import ./src/instrumentation.js src/server.js
import { NodeSDK } from "@opentelemetry/sdk-node";
import { getNodeAutoInstrumentations } from "@opentelemetry/auto-instrumentations-node";

// Endpoint, headers and service name come from OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_SERVICE_NAME; nothing secret lives here.
new NodeSDK({ instrumentations: [getNodeAutoInstrumentations()] }).start();
`;

/** An agent adding the OpenTelemetry SDK to `checkout` the way the instructions ask, checking each answer. */
export const instrumentationScript = () => [
  call("get_problem"),
  (o: Parameters<typeof lastOutput>[0]) => {
    const out = lastOutput(o) as { problem?: unknown; service?: string };
    if (out.problem !== null || out.service !== "checkout")
      throw new Error("expected the instrumentation goal");
    return call("read_file", { path: "package.json" });
  },
  (o: Parameters<typeof lastOutput>[0]) => {
    const manifest = JSON.parse(String(lastOutput(o).content ?? "{}"));
    manifest.dependencies = {
      "@opentelemetry/auto-instrumentations-node": "^0.56.0",
      "@opentelemetry/sdk-node": "^0.200.0",
    };
    return call("write_file", { path: "package.json", content: `${JSON.stringify(manifest, null, 2)}\n` });
  },
  call("write_file", { path: "src/instrumentation.js", content: INSTRUMENTATION_FILE }),
  call("run_tests"),
  (o: Parameters<typeof lastOutput>[0]) =>
    call("finish", {
      summary:
        lastOutput(o).exitCode === 0
          ? "Adds the OpenTelemetry Node SDK with auto-instrumentation, loaded with --import ./src/instrumentation.js and configured from OTEL_* variables."
          : "The tests failed.",
    }),
];

/** Registers `path` (a fixture repository) for the `checkout` service, as `local-git`. */
/** Starts a run for `problemId` (the fixture's problem by default); fails on anything but 201. */
export async function startRun(
  api: { post: (p: string, b?: unknown) => Promise<Response> },
  environmentId: string,
  body: Record<string, unknown> = {},
  problemId = PROBLEM_ID,
): Promise<RunView> {
  const res = await api.post(`/environments/${environmentId}/problems/${problemId}/remediations`, body);
  if (res.status !== 201) throw new Error(`starting a run answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as RunView;
}

export const registerFixtureRepo = (
  api: { post: (p: string, b: unknown) => Promise<Response> },
  environmentId: string,
  path: string,
) =>
  api.post(`/environments/${environmentId}/repositories`, {
    provider: "local-git",
    path,
    defaultBranch: "main",
    testCommand: "node --test",
    services: ["checkout"],
  });

export const TERMINAL = ["awaiting-review", "merged", "closed", "failed", "cancelled", "awaiting-approval"];

export type RunView = {
  id: string;
  status: string;
  threadUrl: string;
  prUrl: string | null;
  reason: string | null;
  reasonCode: string | null;
  branch: string | null;
  headCommit: string | null;
  baseCommit: string | null;
  taskId: string | null;
  approval: { kind: string; approvalUrl: string; message: string } | null;
  change: { files: string[]; risk: { high: boolean; reasons: string[] } } | null;
  validation: { exitCode: number | null; outputTail: string } | null;
  verification: {
    state: string;
    reason: string | null;
    reproduction: { tests: string[]; name: string | null; matched: string | null; testDiff: string } | null;
    baseRun: { command: string; exitCode: number | null; output: string } | null;
    branchRun: { command: string; exitCode: number | null; output: string } | null;
    suiteRun: { command: string; exitCode: number | null; output: string } | null;
  } | null;
  watch: {
    state: string;
    mergedAt: string;
    occurrences: { at: string; traceId: string; serviceVersion: string | null }[];
    evidence: string | null;
    traffic: { spans: number } | null;
  } | null;
  events: { type: string; status: string | null; message: string }[];
};

/** Polls the run until it reaches one of `statuses` (default: any resting status). */
export async function waitForRun(
  api: Client,
  environmentId: string,
  id: string,
  statuses: string[] = TERMINAL,
  timeoutMs = 90_000,
): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  let last: RunView | undefined;
  while (Date.now() < deadline) {
    const res = await api.get(`/environments/${environmentId}/remediations/${id}`);
    last = (await res.json()) as RunView;
    if (statuses.includes(last.status)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`run ${id} did not reach ${statuses.join("|")}: ${JSON.stringify(last, null, 2)}`);
}

export { makeGitRepo };
