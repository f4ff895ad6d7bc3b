import type { Hono } from "hono";
import { claimOrganization, readApprovalLink } from "../../../features/agent-onboarding/approval.ts";
import type { WebEnv } from "../env.ts";
import { formString, postForm, readForm } from "../forms.ts";
import { html } from "../html.ts";
import { renderPage } from "../layout.ts";

/**
 * The approval link of an agent's onboarding session (docs/x402.md), in two steps: a signed-in
 * human claims the wallet organisation and becomes its owner (a confirmation page, never acting
 * on GET; the claim is a CSRF-checked POST), then connects a repository on the environment's
 * repositories page. The same link shows whichever step is left.
 */
export function registerApprovalPages(web: Hono<WebEnv>): void {
  web.get("/approve", async (c) => {
    const token = c.req.query("token") ?? "";
    const user = c.get("webUser");
    if (!user) return c.redirect("/login", 303);
    const ctx = { deps: c.get("deps"), actor: user, requestId: c.get("requestId") };
    const link = await readApprovalLink({ ctx, input: { token } });
    const facts = html`<dl>
    <dt>Organisation</dt><dd>${link.organizationName} <code>${link.organizationId}</code></dd>
    <dt>Agent wallet</dt><dd><code>${link.wallet}</code></dd>
  </dl>`;
    if (link.stage === "claim") {
      return renderPage(c, {
        title: `Claim ${link.organizationName}`,
        lead: "An autonomous agent signed this organisation up with its wallet and asks a human to take it over.",
        body: html`<div class="narrow card">
  <p class="muted">Step 1 of 2: claim the organisation. Step 2: connect a repository.</p>
  ${facts}
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
    }
    const repositories = `/orgs/${link.organizationId}/environments/${link.environmentId}/repositories`;
    return renderPage(c, {
      title:
        link.stage === "done"
          ? `${link.organizationName} is set up`
          : `Connect a repository to ${link.organizationName}`,
      lead:
        link.stage === "done"
          ? "The organisation is claimed and has a repository: the agent can now ask patchbay for fixes, which you review and merge."
          : "The agent's fixes arrive as pull requests on a repository you choose; patchbay never merges them.",
      body: html`<div class="narrow card">
  <p class="muted">Step 1 of 2: claimed. Step 2: connect a repository${link.stage === "done" ? " — done" : ""}.</p>
  ${facts}
  ${
    link.stage === "done"
      ? html`<p>Manage the <a href="${repositories}">repositories</a> of this environment at any time.</p>`
      : html`<p>Install patchbay's GitHub App and select the repository, or register a repository on
  this machine by its path, and map it to the services whose problems it fixes.</p>
  <div class="actions"><a class="button" href="${repositories}">Connect a repository</a></div>`
  }
</div>`,
    });
  });

  web.post("/approve", async (c) => {
    const form = await readForm(c);
    const user = c.get("webUser");
    if (!user) return c.redirect("/login", 303);
    const token = formString(form, "token");
    const ctx = { deps: c.get("deps"), actor: user, requestId: c.get("requestId") };
    await claimOrganization({ ctx, input: { token } });
    return c.redirect(`/approve?token=${encodeURIComponent(token)}`, 303);
  });
}
