import type { Hono } from "hono";
import { claimOrganization, readApprovalLink } from "../../../features/agent-onboarding/approval.ts";
import type { OperatorStep } from "../../../features/agent-onboarding/schemas.ts";
import type { WebEnv } from "../env.ts";
import { formString, postForm, readForm } from "../forms.ts";
import { type Html, html, join, when } from "../html.ts";
import { renderPage } from "../layout.ts";

const stepLabels: Record<OperatorStep["step"], { title: string; button: string }> = {
  claim_organization: { title: "Claim the organisation", button: "Claim" },
  install_app: { title: "Install the GitHub App", button: "Install the GitHub App" },
  select_repositories: { title: "Select a repository", button: "Select a repository" },
  approve_change: { title: "Approve a high-risk change", button: "Review the change" },
  review_pull_request: { title: "Review and merge the pull request", button: "Open the pull request" },
};

const statusBadges: Record<OperatorStep["status"], { label: string; kind: string }> = {
  done: { label: "Done", kind: "ready" },
  pending: { label: "To do now", kind: "waiting" },
  upcoming: { label: "Later", kind: "disabled" },
  not_needed: { label: "Not needed", kind: "disabled" },
};

/** The operator steps, each with its state; the one to take now has its button. */
function stepList(steps: OperatorStep[]): Html {
  return html`<ol class="operator-steps">${join(
    steps.map((s) => {
      const badge = statusBadges[s.status];
      return html`<li data-step="${s.step}" data-status="${s.status}">
    <strong>${stepLabels[s.step].title}</strong> <span class="badge ${badge.kind}">${badge.label}</span>
    <br><span class="muted">${s.description}</span>
    ${when(s.url && s.step !== "claim_organization", () => html`<div class="actions"><a class="button" href="${s.url ?? ""}">${stepLabels[s.step].button}</a></div>`)}
  </li>`;
    }),
  )}</ol>`;
}

/**
 * The approval link of an agent's onboarding session (docs/x402.md), one step at a time: a
 * signed-in human claims the wallet organisation and becomes its owner (a confirmation page,
 * never acting on GET; the claim is a CSRF-checked POST), then installs the GitHub App and
 * selects a repository. The same link shows every step with its state, and the one left.
 */
export function registerApprovalPages(web: Hono<WebEnv>): void {
  web.get("/approve", async (c) => {
    const token = c.req.query("token") ?? "";
    const user = c.get("webUser");
    if (!user) return c.redirect("/login", 303);
    const ctx = { deps: c.get("deps"), actor: user, channel: "web" as const, requestId: c.get("requestId") };
    const link = await readApprovalLink({ ctx, input: { token } });
    const facts = html`<dl>
    <dt>Organisation</dt><dd>${link.organizationName} <code>${link.organizationId}</code></dd>
    <dt>Agent wallet</dt><dd><code>${link.wallet}</code></dd>
  </dl>`;
    const claimed = link.steps.find((s) => s.step === "claim_organization")?.done ?? false;
    if (!claimed) {
      return renderPage(c, {
        title: `Claim ${link.organizationName}`,
        lead: "An autonomous agent signed this organisation up with its wallet and asks a human to take it over.",
        body: html`<div class="narrow card">
  ${facts}
  <p>Claiming makes you its owner: you will see its telemetry and problems, manage its keys and
  connections, and approve what its agent asks for. The agent keeps paying for its own calls.</p>
  ${postForm(c, {
    action: "/approve",
    busy: "Claiming…",
    body: html`<input type="hidden" name="token" value="${token}">
    <div class="actions"><button type="submit">Claim and become owner</button></div>`,
  })}
  ${stepList(link.steps)}
</div>`,
      });
    }
    const done = link.steps.every((s) => s.done);
    const repositories = `/orgs/${link.organizationId}/environments/${link.environmentId}/repositories`;
    return renderPage(c, {
      title: done ? `${link.organizationName} is set up` : `Connect a repository to ${link.organizationName}`,
      lead: done
        ? "The organisation is claimed and has a repository: the agent can now ask patchbay for fixes, which you review and merge."
        : "The agent's fixes arrive as pull requests on a repository you choose; patchbay never merges them.",
      body: html`<div class="narrow card">
  ${facts}
  ${stepList(link.steps)}
  ${when(done, () => html`<p>Manage the <a href="${repositories}">repositories</a> of this environment at any time.</p>`)}
</div>`,
    });
  });

  web.post("/approve", async (c) => {
    const form = await readForm(c);
    const user = c.get("webUser");
    if (!user) return c.redirect("/login", 303);
    const token = formString(form, "token");
    const ctx = { deps: c.get("deps"), actor: user, channel: "web" as const, requestId: c.get("requestId") };
    await claimOrganization({ ctx, input: { token } });
    return c.redirect(`/approve?token=${encodeURIComponent(token)}`, 303);
  });
}
