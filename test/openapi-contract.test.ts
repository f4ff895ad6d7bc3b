import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import { afterAll, vi } from "vitest";
import { githubIntegration } from "../src/features/source-hosting/github/github-app.ts";
import { emitWebhookEvent } from "../src/features/webhooks/index.ts";
import { webhookDeliveries } from "../src/platform/db/schema/webhooks.ts";
import { describe, expect, test } from "./fixtures.ts";
import { loadOpenapiTypescript, OPENAPI_TYPESCRIPT, typeCheckAnswers } from "./lib/answer-types.ts";
import { contractClient, type OpenApiDocument, operationsOf } from "./lib/contract-client.ts";
import {
  type GithubReplay,
  INSTALLATION_ID,
  INSTALLER_CODE,
  replaySettings,
  startGithubReplay,
} from "./lib/github-replay.ts";
import { destructiveTool, echoTool } from "./lib/mcp-servers.ts";
import { FIXED, PROBLEM_ID, remediationHarness, removeFixtureRepos } from "./lib/remediation.ts";
import { call, lastToolResults, scriptedModel } from "./lib/scripted-model.ts";
import { runAsJob } from "./lib/task-setup.ts";
import {
  createKey,
  jsonAttributes,
  jsonLog,
  jsonLogs,
  jsonSpan,
  jsonTraces,
  nanosAgo,
  sendJson,
} from "./lib/telemetry.ts";
import { eventually } from "./lib/wait.ts";
import { signedInBrowser } from "./web.ts";

/**
 * The committed docs/openapi.json against real answers: every documented operation is called
 * on one app with realistic data, for its success and at least one error, and every answer is
 * validated against the schema the document declares for its status and content type, read
 * as closed: an undocumented status, content type, header or field fails as well. Then the
 * answers are assigned to the types openapi-typescript generates from the same document, and
 * must type-check. The last two tests read what the scenarios before them recorded.
 */

// Remediation runs do real work (git, a sandboxed test command, the job queue).
vi.setConfig({ testTimeout: 120_000 });

const doc = JSON.parse(
  readFileSync(new URL("../docs/openapi.json", import.meta.url), "utf8"),
) as OpenApiDocument;

/** Every operation this file calls; must equal the document's (a new operation needs a scenario here). */
const COVERED = [
  "getMe",
  "listEnvironments",
  "createEnvironment",
  "getEnvironment",
  "updateEnvironment",
  "listApiKeys",
  "createApiKey",
  "revokeApiKey",
  "listAuditEvents",
  "listPublishableKeys",
  "createPublishableKey",
  "revokePublishableKey",
  "listServiceHealth",
  "searchLogs",
  "getTrace",
  "listProblems",
  "getProblem",
  "updateProblem",
  "listMcpConnections",
  "createMcpConnection",
  "getMcpConnection",
  "updateMcpConnection",
  "deleteMcpConnection",
  "discoverMcpConnectionTools",
  "approveMcpConnectionTools",
  "setMcpConnectionEnablement",
  "setMcpConnectionCredential",
  "previewMcpConnectionDeletion",
  "createTask",
  "listTasks",
  "getTask",
  "cancelTask",
  "listTaskToolCalls",
  "listTaskCallApprovals",
  "decideTaskCallApproval",
  "getTaskTranscript",
  "createRepository",
  "listRepositories",
  "getRepository",
  "deleteRepository",
  "createRemediation",
  "listRemediations",
  "getRemediation",
  "cancelRemediation",
  "approveRemediation",
  "getProposedChange",
  "getRemediationReview",
  "createGithubInstallLink",
  "listGithubInstallationRepositories",
  "listWebhookEndpoints",
  "createWebhookEndpoint",
  "getWebhookEndpoint",
  "updateWebhookEndpoint",
  "deleteWebhookEndpoint",
  "rotateWebhookSecret",
  "listWebhookDeliveries",
  "getWebhookDelivery",
  "redeliverWebhook",
];

const UNKNOWN_UUID = "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d";

const replays: GithubReplay[] = [];
let client: ReturnType<typeof contractClient> | undefined;
afterAll(async () => {
  removeFixtureRepos();
  await Promise.all(replays.map((r) => r.close()));
});

/** The one app of this file (the remediation harness's, with a sandbox and local git) and its client. */
async function harness(deps: Parameters<typeof remediationHarness>[0]) {
  const h = await remediationHarness(deps);
  client ??= contractClient(h.app, doc);
  return { h, api: client };
}

type Id = { id: string; revision: number };

describe("every documented operation answers as docs/openapi.json says", () => {
  test("the document's operations are exactly the ones covered here", () => {
    expect([...operationsOf(doc).keys()].sort()).toEqual([...COVERED].sort());
  });

  test("webhook endpoints and their deliveries", async ({ deps, owner }) => {
    const { api: all } = await harness(deps);
    const api = all.as(owner.apiKey);
    const org = { organizationId: owner.organizationId };
    const body = { url: "https://hooks.example.com/patchbay", eventTypes: ["problem.new"] };
    const { endpoint } = await api.send<{ endpoint: { id: string } }>("createWebhookEndpoint", 201, {
      params: org,
      body,
    });
    await api.send("createWebhookEndpoint", 400, { params: org, body: { ...body, eventTypes: ["nope"] } });
    const one = { ...org, endpointId: endpoint.id };
    await api.send("listWebhookEndpoints", 200, { params: org });
    await api.send("listWebhookEndpoints", 404, { params: { organizationId: "org_other" } });
    await api.send("getWebhookEndpoint", 200, { params: one });
    await api.send("getWebhookEndpoint", 404, { params: { ...org, endpointId: "whe_unknown" } });
    await api.send("updateWebhookEndpoint", 200, { params: one, body: { description: "pager" } });
    await api.send("updateWebhookEndpoint", 400, { params: one, body: { url: "http://hooks.example.com/" } });
    await api.send("rotateWebhookSecret", 200, { params: one });
    await api.send("rotateWebhookSecret", 404, { params: { ...org, endpointId: "whe_unknown" } });
    await emitWebhookEvent(deps.db, {
      organizationId: owner.organizationId,
      type: "problem.new",
      at: new Date(),
      data: { problemId: "prb_contract" },
    });
    const page = await api.send<{ items: { id: string }[] }>("listWebhookDeliveries", 200, { params: one });
    await api.send("listWebhookDeliveries", 400, { params: one, query: { status: "lost" } });
    const deliveryId = page.items[0]?.id ?? "";
    await api.send("getWebhookDelivery", 200, { params: { ...one, deliveryId } });
    await api.send("getWebhookDelivery", 404, { params: { ...one, deliveryId: "whd_unknown" } });
    // No worker in this file: the delivery stays pending until marked finished here.
    await api.send("redeliverWebhook", 409, { params: { ...one, deliveryId } });
    await deps.db
      .update(webhookDeliveries)
      .set({ status: "failed", finishedAt: new Date() })
      .where(eq(webhookDeliveries.id, deliveryId));
    await api.send("redeliverWebhook", 201, { params: { ...one, deliveryId } });
    await api.send("deleteWebhookEndpoint", 204, { params: one });
    await api.send("deleteWebhookEndpoint", 404, { params: one });
    expect(client?.mismatches.filter((m) => m.includes("Webhook"))).toEqual([]);
  });

  test("identity, environments, API keys, publishable keys", async ({ deps, owner }) => {
    const { api: all } = await harness(deps);
    const api = all.as(owner.apiKey);
    const env = { environmentId: owner.environmentId };

    await api.send("getMe", 200);
    await api.send("getMe", 401, { key: null });
    await api.send("listEnvironments", 200);
    await api.send("listEnvironments", 401, { key: null });
    const staging = await api.send<Id>("createEnvironment", 201, { body: { name: "staging" } });
    await api.send("createEnvironment", 409, { body: { name: "staging" } });
    await api.send("getEnvironment", 200, { params: { environmentId: staging.id } });
    await api.send("getEnvironment", 404, { params: { environmentId: UNKNOWN_UUID } });
    await api.send("updateEnvironment", 200, {
      params: { environmentId: staging.id },
      body: { name: "staging-eu" },
      revision: staging.revision,
    });
    await api.send("updateEnvironment", 412, {
      params: { environmentId: staging.id },
      body: { name: "staging-us" },
      revision: staging.revision,
    });

    const created = await api.send<{ apiKey: { id: string } }>("createApiKey", 201, {
      body: { name: "ci", permissions: ["mcp_connections:read", "telemetry:read"] },
    });
    await api.send("createApiKey", 400, { body: { name: "ci", permissions: ["root"] } });
    await api.send("listApiKeys", 200);
    await api.send("listApiKeys", 401, { key: "sk_live_not-a-key" });
    await api.send("revokeApiKey", 204, { params: { apiKeyId: created.apiKey.id } });
    await api.send("revokeApiKey", 404, { params: { apiKeyId: "key_unknown" } });
    const org = { organizationId: owner.organizationId };
    await api.send("listAuditEvents", 200, { params: org, query: { action: "api_key.revoked" } });
    await api.send("listAuditEvents", 400, { params: org, query: { action: "api_key.exploded" } });
    await api.send("listAuditEvents", 404, { params: { organizationId: "org_unknown" } });

    const pk = await api.send<{ publishableKey: { id: string } }>("createPublishableKey", 201, {
      params: env,
      body: { name: "web" },
    });
    await api.send("createPublishableKey", 400, { params: env, body: {} });
    await api.send("listPublishableKeys", 200, { params: env });
    await api.send("listPublishableKeys", 404, { params: { environmentId: UNKNOWN_UUID } });
    await api.send("revokePublishableKey", 204, { params: { ...env, keyId: pk.publishableKey.id } });
    await api.send("revokePublishableKey", 404, { params: { ...env, keyId: "pk_unknown" } });
  });

  test("telemetry reads and problems, from real OTLP", async ({ deps, owner }) => {
    const { h, api: all } = await harness(deps);
    const api = all.as(owner.apiKey);
    const env = { environmentId: owner.environmentId };
    const { key } = await createKey(owner);
    const error = new TypeError("Cannot read properties of undefined (reading 'sku')");
    const failed = jsonSpan({
      name: "POST /cart/lines",
      status: { code: 2, message: error.message },
      events: [
        {
          name: "exception",
          timeUnixNano: nanosAgo(2),
          attributes: jsonAttributes({
            "exception.type": error.name,
            "exception.message": error.message,
            "exception.stacktrace": error.stack ?? "",
          }),
        },
      ],
    });
    const traceId = String(failed.traceId);
    await sendJson(h.app, "traces", key, jsonTraces([failed, jsonSpan({ traceId })]));
    await sendJson(
      h.app,
      "logs",
      key,
      jsonLogs([
        jsonLog({
          severityNumber: 17,
          severityText: "ERROR",
          body: { stringValue: "price lookup failed" },
          traceId,
        }),
        jsonLog({ body: { stringValue: "cart updated" } }),
      ]),
    );

    const health = await api.send<{ items: unknown[] }>("listServiceHealth", 200, {
      params: env,
      query: { window: "1h" },
    });
    expect(health.items).toHaveLength(1);
    await api.send("listServiceHealth", 400, { params: env, query: { window: "1y" } });
    const logs = await api.send<{ items: unknown[] }>("searchLogs", 200, { params: env, query: { traceId } });
    expect(logs.items).toHaveLength(1);
    await api.send("searchLogs", 400, { params: env, query: { traceId: "not-hex" } });
    await api.send("getTrace", 200, { params: { ...env, traceId } });
    await api.send("getTrace", 404, { params: { ...env, traceId: "4bf92f3577b34da6a3ce929d0e0e4736" } });

    const problems = await api.send<{ items: Id[] }>("listProblems", 200, { params: env });
    const [detected] = problems.items;
    if (!detected) throw new Error("no problem was detected");
    await api.send("listProblems", 400, { params: env, query: { status: "fixed" } });
    const problem = { ...env, problemId: detected.id };
    await api.send("getProblem", 200, { params: problem });
    await api.send("getProblem", 404, { params: { ...env, problemId: "prb_unknown" } });
    await api.send("updateProblem", 428, { params: problem, body: { status: "resolved" } });
    await api.send("updateProblem", 200, {
      params: problem,
      body: { status: "resolved" },
      revision: detected.revision,
    });
    await api.send("updateProblem", 412, {
      params: problem,
      body: { status: "ignored" },
      revision: detected.revision,
    });
  });

  test("MCP connections and tasks, against a real MCP server", async ({ deps, owner, mcp }) => {
    const { h, api: all } = await harness(deps);
    const api = all.as(owner.apiKey);
    const env = { environmentId: owner.environmentId };
    const token = "tok_contract_4d2b8f6a1c9e";
    const server = await mcp.start({
      auth: { kind: "bearer", token },
      tools: [destructiveTool(), echoTool("status")],
    });

    let conn = await api.send<Id>("createMcpConnection", 201, {
      params: env,
      body: { alias: "db", displayName: "Database", endpointUrl: server.url, auth: { kind: "bearer" } },
    });
    await api.send("createMcpConnection", 409, {
      params: env,
      body: { alias: "db", displayName: "Database", endpointUrl: server.url, auth: { kind: "bearer" } },
    });
    const at = { ...env, connectionId: conn.id };
    await api.send("setMcpConnectionCredential", 422, {
      params: at,
      body: { value: "wrong" },
      revision: conn.revision,
    });
    conn = await api.send<Id>("setMcpConnectionCredential", 200, {
      params: at,
      body: { value: token },
      revision: conn.revision,
    });
    await api.send("discoverMcpConnectionTools", 412, { params: at, revision: conn.revision - 1 });
    const discovery = await api.send<{ id: string; tools: { name: string }[] }>(
      "discoverMcpConnectionTools",
      201,
      {
        params: at,
        revision: conn.revision,
      },
    );
    await api.send("setMcpConnectionEnablement", 409, {
      params: at,
      body: { enabled: true },
      revision: conn.revision,
    });
    const approval = { discoveryId: discovery.id, toolNames: discovery.tools.map((t) => t.name) };
    await api.send("approveMcpConnectionTools", 412, {
      params: at,
      body: approval,
      revision: conn.revision + 1,
    });
    conn = await api.send<Id>("approveMcpConnectionTools", 200, {
      params: at,
      body: approval,
      revision: conn.revision,
    });
    conn = await api.send<Id>("setMcpConnectionEnablement", 200, {
      params: at,
      body: { enabled: true },
      revision: conn.revision,
    });
    await api.send("listMcpConnections", 200, { params: env });
    await api.send("listMcpConnections", 404, { params: { environmentId: UNKNOWN_UUID } });
    await api.send("getMcpConnection", 200, { params: at });
    await api.send("getMcpConnection", 404, { params: { ...env, connectionId: "mcp_unknown" } });
    conn = await api.send<Id>("updateMcpConnection", 200, {
      params: at,
      body: { displayName: "Primary database" },
      revision: conn.revision,
    });
    await api.send("updateMcpConnection", 412, {
      params: at,
      body: { displayName: "Stale" },
      revision: conn.revision - 1,
    });

    // A second connection to remove: preview its deletion, delete with the receipt.
    const scratch = await api.send<Id>("createMcpConnection", 201, {
      params: env,
      body: { alias: "scratch", displayName: "Scratch", endpointUrl: server.url, auth: { kind: "none" } },
    });
    const scratchAt = { ...env, connectionId: scratch.id };
    const preview = await api.send<{ receipt: string }>("previewMcpConnectionDeletion", 201, {
      params: scratchAt,
      revision: scratch.revision,
    });
    await api.send("previewMcpConnectionDeletion", 404, {
      params: { ...env, connectionId: "mcp_unknown" },
      revision: 1,
    });
    const receipt = { "deletion-receipt": preview.receipt };
    await api.send("deleteMcpConnection", 204, {
      params: scratchAt,
      revision: scratch.revision,
      headers: receipt,
    });
    await api.send("deleteMcpConnection", 404, {
      params: scratchAt,
      revision: scratch.revision,
      headers: receipt,
    });

    // A task whose agent calls the destructive tool: the call waits for a person's approval.
    h.setModel(undefined as never);
    const instructions = { instructions: "Drop the staging database." };
    await api.send("createTask", 503, { params: env, body: instructions });
    h.setModel(
      scriptedModel([
        call("db__drop_database", { text: "staging" }),
        (o) => call("finish", { summary: JSON.stringify(lastToolResults(o)) }),
      ]).model,
    );
    const task = await api.send<Id>("createTask", 201, { params: env, body: instructions });
    const taskAt = { ...env, taskId: task.id };
    const run = runAsJob(h.deps, { id: task.id, organizationId: owner.organizationId });
    await eventually(
      async () =>
        (await api.send<{ awaitingApproval: unknown }>("getTask", 200, { params: taskAt })).awaitingApproval
          ? true
          : undefined,
      30_000,
      "the task to wait for approval",
    );
    const { items } = await api.send<{ items: { id: string }[] }>("listTaskCallApprovals", 200, {
      params: taskAt,
    });
    const decision = { ...taskAt, callApprovalId: items[0]?.id ?? "" };
    await api.send("decideTaskCallApproval", 200, { params: decision, body: { decision: "approve" } });
    await api.send("decideTaskCallApproval", 409, { params: decision, body: { decision: "reject" } });
    expect(await run).toMatchObject({ status: "succeeded" });
    await api.send("getTask", 404, { params: { ...env, taskId: "tsk_unknown" } });
    await api.send("listTaskCallApprovals", 404, { params: { ...env, taskId: "tsk_unknown" } });
    const calls = await api.send<{ items: unknown[] }>("listTaskToolCalls", 200, { params: taskAt });
    expect(calls.items.length).toBeGreaterThan(0);
    await api.send("listTaskToolCalls", 404, { params: { ...env, taskId: "tsk_unknown" } });
    await api.send("getTaskTranscript", 200, { params: taskAt });
    await api.send("getTaskTranscript", 404, { params: { ...env, taskId: "tsk_unknown" } });
    await api.send("listTasks", 200, { params: env });
    await api.send("listTasks", 400, { params: env, query: { pageSize: "0" } });

    // Cancelled while queued (no task worker runs here), then not cancellable again.
    const queued = await api.send<Id>("createTask", 201, {
      params: env,
      body: { instructions: "Check the status." },
    });
    await api.send("cancelTask", 200, { params: { ...env, taskId: queued.id } });
    await api.send("cancelTask", 409, { params: { ...env, taskId: queued.id } });
  });

  test("repositories, remediations and the GitHub App", async ({ deps, owner }) => {
    const { h, api: all } = await harness(deps);
    const api = all.as(owner.apiKey);
    const env = { environmentId: owner.environmentId };
    const { repo } = h.forTenant(owner);
    const fixProblem = { ...env, problemId: PROBLEM_ID };
    // The agent fixes the bug and also rewrites an existing test: a high-risk change, which waits.
    h.setModel(
      scriptedModel([
        call("get_problem"),
        call("write_file", { path: "src/order-id.js", content: FIXED }),
        call("write_file", {
          path: "test/order-id.test.js",
          content: 'import { test } from "node:test";\ntest("ok", () => {});\n',
        }),
        call("finish", { summary: "parseOrderId kept the dash of the ORD- prefix." }),
      ]).model,
    );

    // Without a repository the run waits for one; it can only be cancelled or resumed.
    await api.send("createRemediation", 404, { params: { ...env, problemId: "prb_unknown" }, body: {} });
    const waiting = await api.send<Id>("createRemediation", 201, { params: fixProblem, body: {} });
    const waitingAt = { ...env, remediationId: waiting.id };
    await eventually(
      async () =>
        (await api.send<{ status: string }>("getRemediation", 200, { params: waitingAt })).status ===
        "awaiting-approval"
          ? true
          : undefined,
      30_000,
      "the run to wait for a repository",
    );
    await api.send("createRemediation", 409, { params: fixProblem, body: {} });
    await api.send("getProposedChange", 404, { params: waitingAt });
    await api.send("approveRemediation", 409, { params: waitingAt });
    await api.send("cancelRemediation", 200, { params: waitingAt });
    await api.send("cancelRemediation", 409, { params: waitingAt });
    await api.send("getRemediationReview", 404, { params: waitingAt });

    const local = {
      provider: "local-git",
      path: repo.path,
      defaultBranch: "main",
      testCommand: "node --test",
      services: ["checkout"],
    };
    await api.send("createRepository", 422, {
      params: env,
      body: { ...local, path: "/nonexistent/checkout" },
    });
    const registered = await api.send<Id>("createRepository", 201, { params: env, body: local });
    await api.send("getRepository", 200, { params: { ...env, repositoryId: registered.id } });
    await api.send("getRepository", 404, { params: { ...env, repositoryId: "rep_unknown" } });

    const run = await api.send<Id>("createRemediation", 201, {
      params: fixProblem,
      body: { budgets: { maxSteps: 10 } },
    });
    const runAt = { ...env, remediationId: run.id };
    const statusOf = async () =>
      (await api.send<{ status: string }>("getRemediation", 200, { params: runAt })).status;
    await eventually(
      async () => ((await statusOf()) === "awaiting-approval" ? true : undefined),
      60_000,
      "a high-risk change",
    );
    await api.send("getProposedChange", 200, { params: runAt });
    // The waiting run still needs its repository.
    await api.send("deleteRepository", 409, { params: { ...env, repositoryId: registered.id } });
    await api.send("approveRemediation", 200, { params: runAt });
    await eventually(
      async () => {
        const status = await statusOf();
        if (status === "failed") throw new Error("the run failed");
        return status === "awaiting-review" ? true : undefined;
      },
      60_000,
      "the change in review",
    );
    await api.send("getRemediationReview", 200, { params: runAt });
    const { taskId } = await api.send<{ taskId: string }>("getRemediation", 200, { params: runAt });
    await api.send("getRemediation", 404, { params: { ...env, remediationId: "rem_unknown" } });
    await api.send("listRemediations", 200, { params: env });
    await api.send("listRemediations", 400, { params: env, query: { status: "done" } });
    // The agent's own task: built-in tool calls, a model transcript.
    await api.send("listTaskToolCalls", 200, { params: { ...env, taskId } });
    await api.send("getTaskTranscript", 200, { params: { ...env, taskId } });

    // GitHub: unavailable until an App is configured, then installed by a person and used.
    await api.send("createGithubInstallLink", 503);
    await api.send("listGithubInstallationRepositories", 503, {
      params: { installationId: INSTALLATION_ID },
    });
    const replay = await startGithubReplay({ repoPath: "/nonexistent" });
    replays.push(replay);
    h.services.github = githubIntegration(replaySettings(replay));
    await api.send("listGithubInstallationRepositories", 404, {
      params: { installationId: INSTALLATION_ID },
    });
    const link = await api.send<{ url: string }>("createGithubInstallLink", 201);
    const browser = await signedInBrowser(h.app, deps, owner.userId);
    const state = new URL(link.url).searchParams.get("state") ?? "";
    const callback = await browser.get(
      `/integrations/github/callback?${new URLSearchParams({ installation_id: String(INSTALLATION_ID), setup_action: "install", state, code: INSTALLER_CODE })}`,
    );
    expect(callback.status, await callback.text()).toBe(200);
    const repos = await api.send<{ items: { fullName: string }[] }>(
      "listGithubInstallationRepositories",
      200,
      {
        params: { installationId: INSTALLATION_ID },
      },
    );
    const github = await api.send<Id>("createRepository", 201, {
      params: env,
      body: {
        provider: "github",
        installationId: INSTALLATION_ID,
        fullName: repos.items[0]?.fullName,
        testCommand: "npm test",
        services: ["api"],
      },
    });
    await api.send("listRepositories", 200, { params: env });
    await api.send("listRepositories", 404, { params: { environmentId: UNKNOWN_UUID } });
    await api.send("deleteRepository", 204, { params: { ...env, repositoryId: github.id } });
    await api.send("deleteRepository", 404, { params: { ...env, repositoryId: github.id } });
  });

  test("every operation answered a success and an error, each as documented", () => {
    if (!client) throw new Error("no scenario ran");
    const missing = COVERED.filter((id) => {
      const statuses = [...(client?.seen.get(id) ?? [])];
      return !statuses.some((s) => s < 300) || !statuses.some((s) => s >= 400);
    });
    expect.soft(missing, "operations without both a success and an error answer").toEqual([]);
    expect(client.mismatches, "answers the document does not describe").toEqual([]);
  });

  test("a client generated from docs/openapi.json type-checks against the recorded answers", async ({
    skip,
  }) => {
    if (!client) throw new Error("no scenario ran");
    const generator = await loadOpenapiTypescript();
    if (!generator) {
      skip(`${OPENAPI_TYPESCRIPT} is not installed: add it to devDependencies to run this check.`);
      return;
    }
    expect(await typeCheckAnswers(generator, doc, client.answers)).toEqual([]);
  });
});
