import { describe, expect, test } from "../../../test/fixtures.ts";
import { signedInBrowser } from "../../../test/web.ts";
import { emitWebhookEvent } from "../../features/webhooks/index.ts";

describe("web UI: webhooks", () => {
  test("add an endpoint (secret shown once), see its delivery log, rotate, disable, delete; errors by field; another organisation's endpoint is 404", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    const browser = await signedInBrowser(app, deps, owner.userId);
    const base = `/orgs/${owner.organizationId}/webhooks`;
    expect(await browser.page(base)).toContain("No webhook endpoints yet.");

    const refused = await browser.post(base, {
      url: "http://hooks.example.com/x",
      eventTypes: ["problem.new"],
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("https://");

    const created = await browser.post(base, {
      url: "https://hooks.example.com/patchbay",
      eventTypes: ["problem.new", "remediation.failed"],
    });
    const page = await created.text();
    expect(created.status, page).toBe(201);
    const secret = /<code class="secret" id="new-secret">(whsec_[^<]+)<\/code>/.exec(page)?.[1];
    expect(secret).toBeDefined();
    const list = await browser.page(base);
    expect(list).toContain("https://hooks.example.com/patchbay");
    expect(list).not.toContain(secret);
    const endpointId = /href="\/orgs\/[^/]+\/webhooks\/(whe_[a-z0-9]+)"/.exec(list)?.[1] ?? "";
    expect(endpointId).not.toBe("");

    await emitWebhookEvent(deps.db, {
      organizationId: owner.organizationId,
      type: "problem.new",
      at: new Date(),
      data: { problemId: "prb_web" },
    });
    const detail = await browser.page(`${base}/${endpointId}`);
    expect(detail).toContain("problem.new");
    expect(detail).toContain("pending");
    expect(detail).not.toContain(secret);

    // Rotating and deleting ask first; the question changes nothing.
    expect(detail).not.toMatch(/action="[^"]*\/(rotate|delete)"/);
    expect(await browser.page(`${base}/${endpointId}/rotate`)).toContain("Rotate the signing secret?");
    expect(await browser.page(`${base}/${endpointId}/delete`)).toContain("Delete this webhook endpoint?");
    expect(await browser.page(`${base}/${endpointId}`)).toContain("problem.new");

    const rotated = await browser.post(`${base}/${endpointId}/rotate`);
    const rotatedPage = await rotated.text();
    expect(rotated.status).toBe(200);
    const newSecret = /id="new-secret">(whsec_[^<]+)</.exec(rotatedPage)?.[1];
    expect(newSecret).toBeDefined();
    expect(newSecret).not.toBe(secret);

    const disabled = await browser.post(`${base}/${endpointId}/disable`);
    expect(disabled.status).toBe(303);
    expect(await browser.page(`${base}/${endpointId}`)).toContain("Disabled");

    const intruder = await signedInBrowser(app, deps, stranger.userId);
    const theirs = await intruder.get(`/orgs/${stranger.organizationId}/webhooks/${endpointId}`);
    expect(theirs.status).toBe(404);

    const deleted = await browser.post(`${base}/${endpointId}/delete`);
    expect(deleted.status).toBe(303);
    expect(await browser.page(base)).toContain("No webhook endpoints yet.");
  }, 60_000);
});
