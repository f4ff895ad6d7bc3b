import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { approveRemediation, cancelRemediation } from "../../../features/remediations/decide-remediation.ts";
import { getRemediation, showProposedChange } from "../../../features/remediations/get-remediation.ts";
import type { ProposedChange, Remediation } from "../../../features/remediations/schemas.ts";
import type { WebEnv } from "../env.ts";
import { postForm } from "../forms.ts";
import { type Html, html, join, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { renderDiff, repositoriesPath, runPath, statusBadge, statusExplanation } from "./remediation-view.ts";
import { githubInstallLink } from "./repository-create.ts";

async function repositoryAccess(c: Context<WebEnv>, run: Remediation): Promise<Html> {
  const org = c.get("org");
  const manage = org.role !== "member";
  const register = `${repositoriesPath(org.id, run.environmentId)}/new${run.service ? `?service=${encodeURIComponent(run.service)}` : ""}`;
  const install = manage ? githubInstallLink(c) : undefined;
  return html`<p>The agent needs read access to the code of ${run.service ? html`the service <code>${run.service}</code>` : "the problem's service"}.
  There is nothing to approve here: register the repository that holds that service's code and the run resumes by itself.</p>
${
  manage
    ? html`<div class="actions"><a class="button" href="${register}">Register a repository</a>${when(
        install,
        () => html` <a class="button secondary" href="${install ?? ""}">Install the GitHub App</a>`,
      )}</div>`
    : html`<p class="muted">Only an owner or administrator of this organisation can register repositories.</p>`
}`;
}

async function highRiskChange(c: Context<WebEnv>, run: Remediation): Promise<Html> {
  let change: ProposedChange;
  try {
    change = await showProposedChange({
      ctx: c.get("ctx"),
      input: { environmentId: run.environmentId, remediationId: run.id },
    });
  } catch (error) {
    // The run is this organisation's (getRemediation read it): only the change is missing.
    if (!isAppError(error) || error.code !== "not_found") throw error;
    return html`<p class="muted">The proposed change is not available.</p>`;
  }
  return html`<h2>Why it needs approval</h2>
<ul>${join(change.risk.reasons.map((r) => html`<li>${r}</li>`))}</ul>
<h2>The agent's summary</h2>
<p class="summary">${change.summary}</p>
<h2>Files</h2>
<ul>${join(change.files.map((f) => html`<li><code>${f.path}</code>${f.deleted ? " (deleted)" : ""}</li>`))}</ul>
<p class="muted">Approving sends the change on to the repository's tests; only if they pass is it proposed for review
  (on a branch — patchbay never merges). Rejecting cancels the run.</p>
<h2>Diff</h2>
${renderDiff(change.diff)}`;
}

async function approvalPage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const remediationId = c.req.param("remediationId") ?? "";
  const run = await getRemediation({
    ctx: c.get("ctx"),
    input: { environmentId: current.id, remediationId },
  });
  const back = html`<p><a href="${runPath(run.id)}">Back to the run</a></p>`;
  if (run.status !== "awaiting-approval" || !run.approval) {
    return renderPage(c, {
      title: "Nothing waits for approval",
      section: "remediations",
      body: html`<div class="card"><p>${statusBadge(run.status)} ${statusExplanation(run)}</p>${back}</div>`,
    });
  }
  const manage = c.get("org").role !== "member";
  const highRisk = run.approval.kind === "high_risk_change";
  const buttons = html`<div class="actions">
  ${when(highRisk, () =>
    postForm(c, {
      action: `${runPath(run.id)}/approval`,
      label: "Approve the change",
      busy: "Approving…",
      body: html`<button type="submit">Approve</button>`,
    }),
  )}
  ${postForm(c, {
    action: `${runPath(run.id)}/rejection`,
    label: highRisk ? "Reject the change" : "Cancel the run",
    busy: "Cancelling…",
    body: html`<button type="submit" class="danger">${highRisk ? "Reject and cancel the run" : "Cancel the run"}</button>`,
  })}
  <a href="${runPath(run.id)}">Back to the run</a>
</div>`;
  return renderPage(c, {
    title: highRisk ? "Approve a high-risk change?" : "The run needs repository access",
    section: "remediations",
    lead: html`Remediation <a href="${runPath(run.id)}"><code>${run.id}</code></a> waits for a person.`,
    body: html`<div class="alert warning"><p>${run.approval.message}</p></div>
<div class="card">
${highRisk ? await highRiskChange(c, run) : await repositoryAccess(c, run)}
${manage ? buttons : html`<p class="muted">Only an owner or administrator of this organisation can approve or cancel.</p>${back}`}
</div>`,
  });
}

export function registerRemediationApprovalPages(web: Hono<WebEnv>): void {
  web.get("/remediations/:remediationId/approval", approvalPage);
  const act = (verb: typeof approveRemediation, done: string) => async (c: Context<WebEnv>) => {
    const environmentId = c.get("environment").current.id;
    const remediationId = c.req.param("remediationId") ?? "";
    await verb({ ctx: c.get("ctx"), input: { environmentId, remediationId } });
    return c.redirect(`${runPath(remediationId)}?done=${done}`, 303);
  };
  web.post("/remediations/:remediationId/approval", act(approveRemediation, "approved"));
  web.post("/remediations/:remediationId/rejection", act(cancelRemediation, "rejected"));
}
