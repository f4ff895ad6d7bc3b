import type { Hono } from "hono";
import { claimOrganization, previewClaim } from "../../features/agent-onboarding/claim-organization.ts";
import type { WebEnv } from "../env.ts";
import { formString, postForm, readForm } from "../forms.ts";
import { html } from "../html.ts";
import { renderPage } from "../layout.ts";

/**
 * The approval link of an agent's onboarding session (docs/x402.md): a signed-in human claims
 * the wallet organisation and becomes its owner. The link opens a confirmation, never acts on
 * GET; the claim itself is a CSRF-checked POST.
 */
export function registerApprovalPages(web: Hono<WebEnv>): void {
  web.get("/approve", async (c) => {
    const token = c.req.query("token") ?? "";
    const preview = await previewClaim({ deps: c.get("deps"), token });
    return renderPage(c, {
      title: `Claim ${preview.organizationName}`,
      lead: "An autonomous agent signed this organisation up with its wallet and asks a human to take it over.",
      body: html`<div class="narrow card">
  <dl>
    <dt>Organisation</dt><dd>${preview.organizationName} <code>${preview.organizationId}</code></dd>
    <dt>Agent wallet</dt><dd><code>${preview.wallet}</code></dd>
  </dl>
  <p>Claiming makes you its owner: you will see its telemetry and problems, manage its keys and
  connections, and approve what its agent asks for. The agent keeps paying for its own calls.</p>
  ${postForm(c, {
    action: "/approve",
    busy: "Claiming…",
    body: html`<input type="hidden" name="token" value="${token}">
    <div class="actions"><button type="submit">Claim and become owner</button></div>`,
  })}
</div>`,
    });
  });

  web.post("/approve", async (c) => {
    const form = await readForm(c);
    const user = c.get("webUser");
    if (!user) return c.redirect("/login", 303);
    const claimed = await claimOrganization({
      deps: c.get("deps"),
      token: formString(form, "token"),
      userId: user.userId,
      requestId: c.get("requestId"),
    });
    return c.redirect(`/orgs/${claimed.organizationId}`, 303);
  });
}
