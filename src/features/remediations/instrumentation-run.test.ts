import { afterAll, vi } from "vitest";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { payingFetch, startTestChain } from "../../../test/lib/dev-chain.ts";
import { keyFor } from "../../../test/lib/members.ts";
import { jsonPost } from "../../../test/lib/paid-app.ts";
import {
  FIXED,
  fixtureFiles,
  lastOutput,
  makeGitRepo,
  removeFixtureRepos,
  telemetryHarness,
} from "../../../test/lib/remediation.ts";
import type { Turn } from "../../../test/lib/scripted-model.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { memberships } from "../../platform/db/schema/users.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

const INSTRUMENTATION = 2_000_000n; // $2

const INSTRUMENTATION_FILE = `// Loaded before the app: node --import ./src/instrumentation.js src/server.js
import { NodeSDK } from "@opentelemetry/sdk-node";
import { getNodeAutoInstrumentations } from "@opentelemetry/auto-instrumentations-node";

// Endpoint, headers and service name come from OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_SERVICE_NAME; nothing secret lives here.
new NodeSDK({ instrumentations: [getNodeAutoInstrumentations()] }).start();
`;

const call = (name: string, input: Record<string, unknown> = {}): Turn => ({ toolCalls: [{ name, input }] });

/** An agent adding the OpenTelemetry SDK the way the instructions ask, checking each answer. */
const instrumentationScript = () => [
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

describe("POST /x402/instrumentation/pr", () => {
  test("a paid request becomes a reviewed branch adding OpenTelemetry to the service's repository", async ({
    deps,
  }) => {
    const chain = await startTestChain();
    try {
      const h = await telemetryHarness({ ...deps, payments: chain.payments }, instrumentationScript());
      const base = h.deps.config.baseUrl;
      const payer = await chain.fundedPayer(25, "10");
      const pay = payingFetch(h.app, chain.payments, payer.privateKey);
      const signup = await (await pay(`${base}/x402/signup`, jsonPost({}))).json();

      // A human owns the organisation and maps the repository to the service.
      const human = await newTenant(h.deps, h.app, "instrument-owner@example.com");
      await h.deps.db
        .insert(memberships)
        .values({ organizationId: signup.organization.id, userId: human.userId, role: "owner" });
      const api = await keyFor(h.deps, h.app, {
        organizationId: signup.organization.id,
        userId: human.userId,
      });
      // A healthy repository: its tests pass before and after.
      const repo = makeGitRepo({ ...fixtureFiles, "src/order-id.js": FIXED });
      const registered = await api.post(`/environments/${signup.environment.id}/repositories`, {
        provider: "local-git",
        path: repo.path,
        defaultBranch: "main",
        testCommand: "node --test",
        services: ["checkout"],
      });
      expect(registered.status, await registered.clone().text()).toBe(201);

      const before = await chain.balanceOf(payer.address);
      const bad = await pay(`${base}/x402/instrumentation/pr`, jsonPost({ service: "" }));
      expect(bad.status).toBe(400);
      const res = await pay(`${base}/x402/instrumentation/pr`, jsonPost({ service: "checkout" }));
      expect(res.status, await res.clone().text()).toBe(201);
      const started = await res.json();
      expect(started).toMatchObject({ status: "queued", service: "checkout" });
      expect(await chain.balanceOf(payer.address)).toBe(before - INSTRUMENTATION);
      // One at a time per service, refused for free.
      const again = await pay(`${base}/x402/instrumentation/pr`, jsonPost({ service: "checkout" }));
      expect(again.status).toBe(409);
      expect((await again.json()).code).toBe("remediation_in_progress");
      expect(await chain.balanceOf(payer.address)).toBe(before - INSTRUMENTATION);

      const session = await (await pay(`${base}/x402/onboard`, jsonPost({}))).json();
      const poll = async () =>
        (
          await h.app.request(`/x402/remediations/${started.remediationId}`, {
            headers: { authorization: `Bearer ${session.sessionToken}` },
          })
        ).json();
      const ready = await eventually(async () => {
        const run = await poll();
        if (["failed", "cancelled"].includes(run.status)) throw new Error(JSON.stringify(run));
        return run.status === "awaiting-review" ? run : undefined;
      }, 120_000);
      expect(ready).toMatchObject({
        kind: "instrumentation",
        problemId: null,
        service: "checkout",
        prUrl: `${base}/remediations/${started.remediationId}/review`,
        change: { files: ["package.json", "src/instrumentation.js"], risk: { high: false } },
        validation: { exitCode: 0 },
      });
      // The branch holds the instrumentation; the base is untouched; nothing was merged.
      expect(repo.git("show", `${ready.branch}:src/instrumentation.js`)).toBe(INSTRUMENTATION_FILE);
      expect(repo.git("log", "-1", "--format=%s", ready.branch).trim()).toBe(
        "feat: OpenTelemetry instrumentation for checkout",
      );
      expect(repo.git("ls-tree", "--name-only", "main", "src/").split("\n")).not.toContain(
        "src/instrumentation.js",
      );
      expect(repo.git("rev-parse", "main").trim()).toBe(ready.baseCommit);
    } finally {
      await chain.close();
    }
  });
});
