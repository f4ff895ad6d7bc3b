import { afterAll, vi } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import type { Client } from "../../../test/http.ts";
import {
  type Harness,
  investigationScript,
  type RunView,
  registerFixtureRepo,
  removeFixtureRepos,
  telemetryHarness,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { createKey, hexId, jsonSpan } from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { telemetryEvidence } from "./telemetry-evidence.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

const STACK =
  "Error: order -123 not found\n    at findOrder (file:///srv/checkout/src/orders.js:8:23)\n    at handle (file:///srv/checkout/src/server.js:14:10)";

/** A request of `checkout` (an entry span), failing with the problem when `failing`. */
const request = (failing: boolean) =>
  jsonSpan({
    traceId: hexId(16),
    name: "GET /orders/:id",
    ...(failing
      ? {
          status: { code: 2 },
          events: [
            {
              name: "exception",
              timeUnixNano: (BigInt(Date.now()) * 1_000_000n).toString(),
              attributes: [
                { key: "exception.type", value: { stringValue: "Error" } },
                { key: "exception.message", value: { stringValue: "order -123 not found" } },
                { key: "exception.stacktrace", value: { stringValue: STACK } },
              ],
            },
          ],
        }
      : {}),
  });

/** Sends spans of `checkout` at `version` (none: no service.version) through OTLP ingest. */
async function send(h: Harness, key: string, spans: Record<string, unknown>[], version?: string) {
  const attributes = [
    { key: "service.name", value: { stringValue: "checkout" } },
    ...(version ? [{ key: "service.version", value: { stringValue: version } }] : []),
  ];
  const res = await h.app.request("/v1/traces", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      resourceSpans: [{ resource: { attributes }, scopeSpans: [{ scope: { name: "t" }, spans }] }],
    }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

type ProblemView = { id: string; status: string };
const problemOf = async (api: Client, envId: string) =>
  eventually(async () => {
    const page = (await (await api.get(`/environments/${envId}/problems`)).json()) as {
      items: ProblemView[];
    };
    return page.items[0];
  }, 30_000);

/** A fix of the telemetry problem, merged by hand: the run, its problem and the ingest key. */
async function mergedFix(
  h: Harness,
  owner: { environmentId: string },
  api: Client,
  key: string,
  repo: { path: string; git: (...args: string[]) => string },
) {
  await send(h, key, [request(true), request(false)], "1.0.0");
  const problem = await problemOf(api, owner.environmentId);
  expect((await registerFixtureRepo(api, owner.environmentId, repo.path)).status).toBe(201);
  const started = await api.post(
    `/environments/${owner.environmentId}/problems/${problem.id}/remediations`,
    {},
  );
  expect(started.status, await started.clone().text()).toBe(201);
  const run = await waitForRun(api, owner.environmentId, ((await started.json()) as RunView).id);
  expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
  expect(run.verification?.state).toBe("reproduced-and-fixed");
  repo.git("merge", "--no-ff", "-q", "-m", "merge fix", `patchbay/${run.id}`);
  const merged = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
  expect(merged.watch).toMatchObject({ state: "watching", versionsAtMerge: ["1.0.0"], occurrences: [] });
  return { run: merged, problem };
}

const problemCount = async (api: Client, envId: string, id: string) =>
  ((await (await api.get(`/environments/${envId}/problems/${id}`)).json()) as { count: number }).count;

const problemStatus = async (api: Client, envId: string, id: string) =>
  ((await (await api.get(`/environments/${envId}/problems/${id}`)).json()) as ProblemView).status;

describe("a merged fix is watched", () => {
  test("an occurrence from the old version does not count; one from a newer service.version makes the problem regressed and the run shows it", async ({
    deps,
    owner,
  }) => {
    const h = await telemetryHarness(deps, investigationScript());
    h.deps.config.remediation.watch = { graceMs: 60 * 60 * 1000, quietWindowMs: 60 * 60 * 1000 };
    const { api, repo } = h.forTenant(owner);
    h.services.evidence = telemetryEvidence(() => h.deps);
    const { key } = await createKey(owner);
    const { run, problem } = await mergedFix(h, owner, api, key, repo);
    expect(await problemStatus(api, owner.environmentId, problem.id)).toBe("resolved");

    // The old build still serves while the fix deploys: its failure is not the fix's.
    const before = await problemCount(api, owner.environmentId, problem.id);
    await send(h, key, [request(true)], "1.0.0");
    await eventually(async () =>
      (await problemCount(api, owner.environmentId, problem.id)) > before ? true : undefined,
    );
    const still = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
    expect(still.watch?.state).toBe("watching");
    expect(await problemStatus(api, owner.environmentId, problem.id)).toBe("resolved");

    // The new build fails the same way: regressed after merge.
    await send(h, key, [request(true)], "1.0.1");
    const regressed = await eventually(async () => {
      const r = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
      return r.watch?.state === "regressed" ? r : undefined;
    }, 30_000);
    expect(regressed.watch?.occurrences).toHaveLength(1);
    expect(regressed.watch?.occurrences[0]).toMatchObject({ serviceVersion: "1.0.1" });
    expect(regressed.watch?.evidence).toContain("Regressed after merge");
    expect(regressed.events.at(-1)).toMatchObject({ type: "regressed" });
    expect(await problemStatus(api, owner.environmentId, problem.id)).toBe("regressed");
    // Decided once: a later occurrence adds no second event.
    await send(h, key, [request(true)], "1.0.1");
    const again = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
    expect(again.events.filter((e) => e.type === "regressed")).toHaveLength(1);
  });

  test("without service.version: an occurrence after the grace period regresses it", async ({
    deps,
    owner,
  }) => {
    const h = await telemetryHarness(deps, investigationScript());
    h.deps.config.remediation.watch = { graceMs: 0, quietWindowMs: 60 * 60 * 1000 };
    const { api, repo } = h.forTenant(owner);
    h.services.evidence = telemetryEvidence(() => h.deps);
    const { key } = await createKey(owner);
    const { run, problem } = await mergedFix(h, owner, api, key, repo);
    await send(h, key, [request(true)]);
    const regressed = await eventually(async () => {
      const r = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
      return r.watch?.state === "regressed" ? r : undefined;
    }, 30_000);
    expect(regressed.watch?.occurrences[0]).toMatchObject({ serviceVersion: null });
    expect(regressed.watch?.evidence).toContain("after the grace period");
    expect(await problemStatus(api, owner.environmentId, problem.id)).toBe("regressed");
  });

  test("quiet traffic from the new version over the window closes it as fixed, with the evidence", async ({
    deps,
    owner,
  }) => {
    const h = await telemetryHarness(deps, investigationScript());
    h.deps.config.remediation.watch = { graceMs: 60 * 60 * 1000, quietWindowMs: 1_000 };
    const { api, repo } = h.forTenant(owner);
    h.services.evidence = telemetryEvidence(() => h.deps);
    const { key } = await createKey(owner);
    const { run, problem } = await mergedFix(h, owner, api, key, repo);
    // The service keeps serving (the new build) and the problem stays away, past the window.
    const fixed = await eventually(
      async () => {
        await send(h, key, [request(false)], "1.0.1");
        const r = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
        return r.watch?.state === "fixed" ? r : undefined;
      },
      30_000,
      "the watch to close the problem as fixed",
    );
    expect(fixed.watch?.traffic?.spans).toBeGreaterThan(0);
    expect(fixed.watch?.evidence).toContain("service.version 1.0.1");
    expect(fixed.events.at(-1)).toMatchObject({ type: "fix_confirmed" });
    expect(await problemStatus(api, owner.environmentId, problem.id)).toBe("resolved");
  });
});
