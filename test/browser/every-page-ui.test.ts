import type { Page } from "playwright-core";
import { afterAll } from "vitest";
import type { Deps } from "../../src/deps.ts";
import { newId } from "../../src/ids.ts";
import { remediationEvents, remediations } from "../../src/platform/db/schema/remediations.ts";
import { createWebRoutes } from "../../src/transports/web/routes.ts";
import { describe, expect, newTenant, type Tenant } from "../fixtures.ts";
import { type GitRepo, makeGitRepo } from "../lib/git-repo.ts";
import { echoTool } from "../lib/mcp-servers.ts";
import { runApplication } from "../lib/otel-app.ts";
import { fixtureFiles, registerFixtureRepo } from "../lib/remediation.ts";
import { haveChromium, screenshot, screenshotOf, signIn, webTest as test } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

/**
 * Every page of the web UI, listed from the web router itself, at a 360 px phone and at a desktop
 * width, with real data behind each (a 13-tool MCP server, telemetry sent with the OpenTelemetry
 * SDK, a registered repository, remediation runs, keys and an invitation): no page scrolls
 * sideways, and the navigation stays inside the header. Then every destructive action asks first.
 */

const repos: GitRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.remove();
});

const title = haveChromium
  ? "every page at 360 px and at desktop width in Chromium"
  : "every page in Chromium (skipped: no /usr/bin/chromium)";

/** A documentation server's thirteen tools, with the descriptions, schemas and hints real ones carry. */
function thirteenTools() {
  const verbs = ["search", "get", "list", "create", "update", "delete", "archive", "restore", "export"];
  const objects = ["page", "space", "comment", "attachment"];
  return Array.from({ length: 13 }, (_, i) => {
    const verb = verbs[i % verbs.length] ?? "get";
    const object = objects[i % objects.length] ?? "page";
    const reads = ["search", "get", "list", "export"].includes(verb);
    return echoTool(`${verb}_${object}s_${i}`, {
      title: `${verb[0]?.toUpperCase()}${verb.slice(1)} ${object}s`,
      description: `${verb[0]?.toUpperCase()}${verb.slice(1)}s ${object}s of the knowledge base. `.repeat(6),
      inputSchema: {
        type: "object",
        properties: {
          space: { type: "string", description: "The space key, e.g. ENG." },
          query: { type: "string", description: "Free text; quoted phrases match exactly." },
          limit: { type: "integer", minimum: 1, maximum: 100, default: 25 },
          cursor: { type: "string" },
        },
        required: ["space"],
      },
      annotations: reads
        ? { readOnlyHint: true, openWorldHint: false }
        : { readOnlyHint: false, destructiveHint: verb === "delete", idempotentHint: verb === "update" },
    });
  });
}

/** A run waiting for approval of a high-risk change, with a diff whose lines are wider than a phone. */
async function seedRemediations(deps: Deps, tenant: Tenant, problemId: string): Promise<string> {
  const id = newId("rem");
  const now = Date.now();
  const longLine = `+export const lookup = (orderId) => db.orders.findOne({ where: { id: parseOrderId(orderId) }, include: ["lines", "customer", "payments"] });`;
  await deps.db.insert(remediations).values({
    id,
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    problemId,
    service: "checkout",
    status: "awaiting-approval",
    requestedBy: tenant.userId,
    budgets: { maxSteps: 40, maxTokens: 200_000, maxDurationMs: 900_000 },
    approval: {
      kind: "high_risk_change",
      requestedAt: new Date(now).toISOString(),
      message: "The change touches a database migration; a person must approve it before it is tested.",
    },
    change: {
      summary: "Parse the order id after its prefix instead of at a fixed offset.",
      files: [{ path: "src/orders.js", content: "export {};\n" }],
      diff: `diff --git a/src/orders.js b/src/orders.js\n--- a/src/orders.js\n+++ b/src/orders.js\n@@ -1,3 +1,3 @@\n-export const lookup = (orderId) => db.orders.findOne(orderId);\n${longLine}\n`,
      risk: { high: true, reasons: ["touches migrations/0003_orders.sql", "changes more than 200 lines"] },
    },
    createdAt: new Date(now - 60_000),
    updatedAt: new Date(now),
  });
  await deps.db.insert(remediationEvents).values([
    { remediationId: id, at: new Date(now - 60_000), type: "status", status: "queued", message: "Queued." },
    {
      remediationId: id,
      at: new Date(now - 30_000),
      type: "step",
      message: `Read ${"src/very/deeply/nested/module/path/".repeat(3)}orders.js`,
    },
    {
      remediationId: id,
      at: new Date(now),
      type: "status",
      status: "awaiting-approval",
      message: "Waiting for approval of a high-risk change.",
    },
  ]);
  return id;
}

type Layout = {
  viewport: number;
  scrollWidth: number;
  header: { right: number; bottom: number } | null;
  navOutside: string[];
};

/** What the test asserts of each page: no sideways scroll, every navigation link inside the header. */
const measure = (page: Page): Promise<Layout> =>
  page.evaluate(() => {
    const header = document.querySelector("header.top")?.getBoundingClientRect() ?? null;
    const links = [...document.querySelectorAll("header.top nav a")];
    const navOutside = header
      ? links
          .filter((a) => {
            const r = a.getBoundingClientRect();
            return (
              r.left < header.left - 0.5 ||
              r.right > header.right + 0.5 ||
              r.top < header.top - 0.5 ||
              r.bottom > header.bottom + 0.5 ||
              r.right > window.innerWidth + 0.5
            );
          })
          .map((a) => a.textContent ?? "")
      : [];
    return {
      viewport: window.innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      header: header ? { right: header.right, bottom: header.bottom } : null,
      navOutside,
    };
  });

describe.skipIf(!haveChromium)(title, () => {
  test("no page scrolls sideways or pushes the navigation out of the header; destructive actions ask first", async ({
    web,
    deps,
    app,
    mcp,
  }) => {
    // The data behind the pages.
    const owner = await newTenant(deps, app, "every-page@example.com");
    await givePassword(deps, "every-page@example.com");
    const org = `/orgs/${owner.organizationId}`;
    const env = `${org}/environments/${owner.environmentId}`;
    const server = await mcp.start({ tools: thirteenTools() });
    const page = await web.newPage();
    await signIn(page, "every-page@example.com", TEST_PASSWORD);

    await page.goto(`${env}/connections/new`);
    await page.getByLabel("Alias").fill("knowledge-base");
    await page.getByLabel("Endpoint URL").fill(server.url);
    await page.getByRole("button", { name: "Create connection" }).click();
    await page.waitForURL(/done=created/);
    const connectionPath = new URL(page.url()).pathname;
    expect(await page.locator("h1").innerText()).toMatch(/^knowledge-base/);
    await page.getByRole("button", { name: "Discover tools" }).click();
    await page.waitForURL(/done=discovered/);
    for (const box of await page.locator('input[name="toolNames"]:not([disabled])').all()) await box.check();
    await page.getByRole("button", { name: "Approve selected tools" }).click();
    await page.waitForURL(/done=approved/);
    await page.getByRole("button", { name: "Enable", exact: true }).click();
    await page.waitForURL(/done=enabled/);

    // Thirteen tools in compact rows: annotations as badges, descriptions and schemas on demand.
    const tools = page.locator("table.tools");
    expect(await tools.locator("tbody tr").count()).toBe(13);
    expect(await tools.locator("tbody tr").first().locator(".badge").allInnerTexts()).toEqual([
      "read-only",
      "closed world",
      "Read",
    ]);
    expect(await tools.innerText()).not.toContain("readOnlyHint");
    expect(await tools.locator("pre").first().isVisible()).toBe(false);
    const tableHeight = (await tools.boundingBox())?.height ?? Number.POSITIVE_INFINITY;
    expect(tableHeight).toBeLessThan(13 * 72);
    await tools.locator("tbody tr").nth(1).locator("summary").click();
    expect(await tools.locator("tbody tr").nth(1).locator("pre").first().innerText()).toContain('"space"');
    await screenshotOf(tools, "connection-tools");

    const keyResponse = await owner.api.post(`/environments/${owner.environmentId}/publishable-keys`, {
      name: "checkout",
    });
    const { key, publishableKey } = (await keyResponse.json()) as {
      key: string;
      publishableKey: { id: string };
    };
    const traceId = await runApplication(web.baseUrl, `Bearer ${key}`);
    const problemId = await (async () => {
      for (;;) {
        const res = await owner.api.get(`/environments/${owner.environmentId}/problems`);
        const items = ((await res.json()) as { items: { id: string }[] }).items;
        if (items[0]) return items[0].id;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const repo = makeGitRepo(fixtureFiles);
    repos.push(repo);
    const registered = await registerFixtureRepo(owner.api, owner.environmentId, repo.path);
    expect(registered.status).toBe(201);
    const repositoryId = ((await registered.json()) as { id: string }).id;
    const secondKey = await owner.api.post("/api-keys", {
      name: "deploys",
      permissions: ["environments:read"],
    });
    const apiKeyId = ((await secondKey.json()) as { apiKey: { id: string } }).apiKey.id;
    await page.goto(`${org}/members`);
    await page.getByLabel("Email").fill("someone-with-a-rather-long-address@example-company.example.com");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    await page.locator("#invitation-link").waitFor();
    const invitationId =
      /\/invitations\/(inv_[0-9a-z]+)\/revoke/.exec(await page.content())?.[1] ?? "no invitation id";
    const remediationId = await seedRemediations(deps, owner, problemId);
    const webhook = await owner.api.post(`/organizations/${owner.organizationId}/webhook-endpoints`, {
      url: "https://hooks.example.com/patchbay-receiver-with-a-long-path",
      eventTypes: ["remediation.failed", "problem.new", "connection.credential_rejected"],
    });
    expect(webhook.status, await webhook.clone().text()).toBe(201);
    const endpointId = ((await webhook.json()) as { endpoint: { id: string } }).endpoint.id;

    // Every GET page of the web router, its parameters filled with the data above.
    const params: Record<string, string> = {
      orgId: owner.organizationId,
      environmentId: owner.environmentId,
      connectionId: connectionPath.split("/").pop() ?? "",
      keyId: publishableKey.id,
      apiKeyId,
      userId: owner.userId,
      invitationId,
      traceId,
      problemId,
      repositoryId,
      remediationId,
      endpointId,
      // A write call waiting for a person needs a running task and its agent: its page is the
      // layout's 404 here, which is measured like any other.
      callApprovalId: "cap_0000000000000000000000000",
    };
    const routes = [
      ...new Set(
        createWebRoutes()
          .routes.filter((r) => r.method === "GET" && !r.path.startsWith("/assets/"))
          .map((r) => r.path),
      ),
    ];
    expect(routes.length).toBeGreaterThan(25);
    const urls = routes.map((path) =>
      path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
        const value = params[name];
        if (!value) throw new Error(`no value for :${name} in ${path}`);
        return value;
      }),
    );
    urls.push(`${env}/services?window=7d`, "/no-such-page");

    const destructive: { url: string; action: string; heading: string }[] = [];
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      for (const url of urls) {
        const response = await page.goto(url);
        expect(response?.status() ?? 0, url).toBeLessThan(500);
        const layout = await measure(page);
        if (layout.scrollWidth > layout.viewport) {
          // What sticks out, for the failure below.
          console.log(
            "OVERFLOW",
            JSON.stringify([url, width, layout.scrollWidth]),
            await page.evaluate(() =>
              [...document.querySelectorAll("body *")]
                .filter(
                  (e) =>
                    e.getBoundingClientRect().right > window.innerWidth + 0.5 && !e.closest(".table-scroll"),
                )
                .slice(0, 8)
                .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`),
            ),
          );
        }
        expect(layout.scrollWidth, `${url} at ${width} px`).toBeLessThanOrEqual(layout.viewport);
        expect(layout.navOutside, `${url} at ${width} px`).toEqual([]);
        if (width === 1280) {
          const forms = await page
            .locator("main form[method=post]")
            .evaluateAll((all) => all.map((f) => (f as HTMLFormElement).getAttribute("action") ?? ""));
          const heading = await page.locator("h1").first().innerText();
          for (const action of forms.filter((a) => /\/(revoke|remove|delete|cancel|rejection)$/.test(a))) {
            destructive.push({ url, action, heading });
          }
        }
      }
    }
    await page.setViewportSize({ width: 360, height: 800 });
    await page.goto(`${env}/connections`);
    await screenshot(page, "phone-connections");
    await page.setViewportSize({ width: 1280, height: 800 });

    // A destructive POST is only ever offered by a page that asks ("…?") with a way back.
    expect(destructive.length).toBeGreaterThanOrEqual(6);
    for (const d of destructive) expect(d.heading, `${d.action} on ${d.url}`).toMatch(/\?$/);

    // And each destructive control on the ordinary pages leads to that question first.
    const asks = async (start: string, control: () => Promise<void>, question: RegExp) => {
      await page.goto(start);
      await control();
      await page.getByRole("heading", { name: question }).waitFor();
      expect(await page.getByRole("link", { name: "Cancel" }).count(), start).toBe(1);
    };
    await asks(
      `${org}/api-keys`,
      () => page.getByRole("link", { name: "Revoke… deploys" }).click(),
      /^Revoke deploys\?$/,
    );
    await page.getByRole("link", { name: "Cancel" }).click();
    expect(await page.locator("main").innerText()).not.toContain("Revoked");
    await asks(
      `${org}/members`,
      () => page.getByRole("link", { name: /^Withdraw…/ }).click(),
      /^Withdraw the invitation/,
    );
    await asks(
      `${org}/members`,
      () => page.getByRole("link", { name: "Remove…" }).click(),
      /^Remove every-page/,
    );
    await asks(
      `${env}/telemetry-keys`,
      () =>
        page
          .getByRole("link", { name: /^Revoke/ })
          .first()
          .click(),
      /^Revoke checkout\?$/,
    );
    await asks(
      `${env}/repositories`,
      () =>
        page
          .getByRole("link", { name: /^Remove|^Delete/ })
          .first()
          .click(),
      /\?$/,
    );
    await asks(
      connectionPath,
      () => page.getByRole("button", { name: "Disable…" }).click(),
      /^Disable knowledge-base\?$/,
    );
    await page.getByRole("link", { name: "Cancel" }).click();
    expect(await page.locator("h1 .badge").innerText()).toBe("Ready");
    await asks(
      `/remediations/${remediationId}`,
      () => page.getByRole("link", { name: "Cancel run…" }).click(),
      /^Cancel this remediation\?$/,
    );
    await asks(
      `/remediations/${remediationId}/approval`,
      () => page.getByRole("link", { name: "Reject and cancel the run…" }).click(),
      /^Reject and cancel this remediation\?$/,
    );
    // Deleting a connection asks too (the API's preview and receipt), once it is disabled.
    await page.goto(connectionPath);
    await page.getByRole("button", { name: "Disable…" }).click();
    await page.getByRole("button", { name: "Disable connection" }).click();
    await page.waitForURL(/done=disabled/);
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("heading", { name: "Delete knowledge-base?" }).waitFor();
  }, 240_000);
});
