import { afterAll, vi } from "vitest";
import { describe, expect, newTenant, test } from "../fixtures.ts";
import {
  investigationScript,
  PROBLEM_ID,
  remediationHarness,
  removeFixtureRepos,
} from "../lib/remediation.ts";
import { call, scriptedModel } from "../lib/scripted-model.ts";
import { haveChromium, screenshot, signIn, startWebUi } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

// A run does real work (git, a sandboxed test suite, a job queue) while the page refreshes.
vi.setConfig({ testTimeout: 240_000 });
afterAll(removeFixtureRepos);

/**
 * A person's whole remediation flow in Chromium against a real patchbay with the remediation
 * worker on its real queue: register a local-git repository, start a run on a problem, watch
 * the run page refresh itself to "Ready for review", read the diff; then approve a high-risk
 * change from its approval page. The agent is the AI SDK's scripted mock model; the repository,
 * git, the sandboxed test suite and the job queue are real.
 */
describe.skipIf(!haveChromium)("remediation pages in Chromium", () => {
  test("register a repository → start → run page reaches review → review diff → approve a high-risk change", async ({
    deps,
  }) => {
    const h = await remediationHarness(deps);
    const owner = await newTenant(h.deps, h.app, "ui-remediation@example.com");
    await givePassword(h.deps, "ui-remediation@example.com");
    const { repo } = h.forTenant(owner);
    h.setModel(scriptedModel(investigationScript()).model);
    const web = await startWebUi(h.deps);
    try {
      const page = await web.newPage();
      await signIn(page, "ui-remediation@example.com", TEST_PASSWORD);

      await page
        .getByRole("navigation", { name: "Organisation" })
        .getByRole("link", { name: "Repositories" })
        .click();
      await page.getByRole("link", { name: "Register a repository" }).click();
      await page.getByLabel("Services").fill("checkout");
      await page.getByLabel("Absolute path").fill(repo.path);
      await page.getByLabel("Test command").fill("node --test");
      await page.getByRole("button", { name: "Register repository" }).click();
      await page.getByRole("status").filter({ hasText: "The repository is registered." }).waitFor();
      expect(await page.locator("table").innerText()).toContain(repo.path);
      await screenshot(page, "repositories");

      await page
        .getByRole("navigation", { name: "Organisation" })
        .getByRole("link", { name: "Remediations" })
        .click();
      await page.getByText("Start a remediation").click();
      await page.getByLabel("Problem id").fill(PROBLEM_ID);
      await page.getByRole("button", { name: "Start remediation" }).click();
      await page.waitForURL(/\/remediations\/rem_[0-9a-z]+$/);
      const runUrl = new URL(page.url()).pathname;
      expect(await page.locator("h1").innerText()).toBe("Fixing: Error: order -123 not found");

      // The page reloads itself (meta refresh) until the run rests.
      await page.locator('.status-line [data-status="awaiting-review"]').waitFor({ timeout: 150_000 });
      expect(await page.locator(".status-line").innerText()).toContain("patchbay never merges");
      expect(await page.locator("ol.timeline").innerText()).toContain("Review opened");
      await screenshot(page, "remediation-run");

      await page.getByRole("link", { name: "Review the fix" }).click();
      await page.waitForURL(`**${runUrl}/review`);
      const added = await page.locator("pre.diff .add").allInnerTexts();
      expect(added).toContain('+  return Number(id.slice("ORD-".length));');
      expect(await page.locator("#merge-steps").innerText()).toContain(
        `git merge --no-ff patchbay/${runUrl.split("/")[2]}`,
      );
      await screenshot(page, "remediation-review");

      // A second run whose change edits an existing test: it waits for a person's approval.
      const script = investigationScript();
      h.setModel(
        scriptedModel([
          ...script.slice(0, 7),
          call("write_file", {
            path: "test/order-id.test.js",
            content: 'import { test } from "node:test";\ntest("ok", () => {});\n',
          }),
          ...script.slice(7),
        ]).model,
      );
      await page.goto(`/orgs/${owner.organizationId}/environments/${owner.environmentId}/remediations`);
      await page.getByText("Start a remediation").click();
      await page.getByLabel("Problem id").fill(PROBLEM_ID);
      await page.getByRole("button", { name: "Start remediation" }).click();
      await page.waitForURL(/\/remediations\/rem_[0-9a-z]+$/);
      await page.getByRole("link", { name: "Review and approve" }).waitFor({ timeout: 150_000 });
      await page.getByRole("link", { name: "Review and approve" }).click();
      await page.getByRole("heading", { name: "Approve a high-risk change?" }).waitFor();
      expect(await page.locator("main").innerText()).toContain(
        "edits the existing test test/order-id.test.js",
      );
      await screenshot(page, "remediation-approval");
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("status").filter({ hasText: "Approved." }).waitFor();
      await page.locator('.status-line [data-status="awaiting-review"]').waitFor({ timeout: 150_000 });
    } finally {
      await web.close();
    }
  });
});
