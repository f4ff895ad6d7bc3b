import type { Context, Hono } from "hono";
import { AppError } from "../../../errors.ts";
import { decideCallApproval, getCallApproval } from "../../../features/tasks/call-approvals.ts";
import type { WebEnv } from "../env.ts";
import { formString, postForm, readForm } from "../forms.ts";
import { html, when } from "../html.ts";
import { renderPage } from "../layout.ts";

const pagePath = (id: string) => `/call-approvals/${id}`;

const outcomes: Record<string, string> = {
  approved: "Approved: the agent makes this call once, with exactly these arguments.",
  rejected: "Rejected: the call is not made, and the agent is told.",
};

/**
 * The browser action a pending write call's `url` names (REST, CLI and the MCP server hand it
 * out): the exact call the task agent asks to make, and for owners and admins the two buttons.
 * The decision is the same verb as `POST …/call-approvals/{id}/decision`.
 */
async function approvalPage(c: Context<WebEnv>): Promise<Response> {
  const callApprovalId = c.req.param("callApprovalId") ?? "";
  const environmentId = c.get("environment").current.id;
  const approval = await getCallApproval({
    ctx: c.get("ctx"),
    input: { environmentId, taskId: c.get("taskId"), callApprovalId },
  });
  const manage = c.get("org").role !== "member";
  const done = outcomes[c.req.query("done") ?? ""];
  const decide = (decision: "approve" | "reject", label: string, style: string) =>
    postForm(c, {
      action: `${pagePath(approval.id)}/decision`,
      label,
      busy: "Saving your decision…",
      body: html`<input type="hidden" name="decision" value="${decision}"><button type="submit"${
        style ? html` class="${style}"` : ""
      }>${label}</button>`,
    });
  return renderPage(c, {
    title: `Approve a call of ${approval.toolName}?`,
    section: "connections",
    lead: html`Task <code>${approval.taskId}</code> asks to call a <strong>write</strong> tool: one that may change
      your system. Nothing is sent until an owner or admin approves this exact call.`,
    body: html`${when(done, () => html`<div class="alert success" role="status"><p>${done}</p></div>`)}
<div class="card">
<dl class="details">
  <dt>State</dt><dd><span class="badge ${approval.state === "pending" ? "no" : "ready"}">${approval.state}</span></dd>
  <dt>Tool</dt><dd><code>${approval.toolName}</code></dd>
  <dt>Connection</dt><dd><code>${approval.connectionId}</code>, revision ${approval.connectionRevision}</dd>
  <dt>Requested</dt><dd>${approval.requestedAt}</dd>
  <dt>${approval.state === "pending" ? "Expires" : "Decided by"}</dt><dd>${
    approval.state === "pending" ? approval.expiresAt : (approval.decidedBy ?? "nobody")
  }</dd>
</dl>
<h2>Arguments</h2>
<pre>${JSON.stringify(approval.arguments, null, 2)}</pre>
${
  approval.state !== "pending"
    ? html`<p class="muted">This approval is ${approval.state}; nothing more can be decided here.</p>`
    : manage
      ? html`<div class="actions">${decide("approve", "Approve this call", "")} ${decide("reject", "Reject", "danger")}</div>`
      : html`<p class="muted">Only an owner or administrator of this organisation can approve or reject it.</p>`
}
</div>`,
  });
}

export function registerCallApprovalPages(web: Hono<WebEnv>): void {
  web.get("/call-approvals/:callApprovalId", approvalPage);
  web.post("/call-approvals/:callApprovalId/decision", async (c) => {
    const callApprovalId = c.req.param("callApprovalId") ?? "";
    const decision = formString(await readForm(c), "decision");
    if (decision !== "approve" && decision !== "reject") {
      throw new AppError("invalid_request", "Choose Approve or Reject.");
    }
    await decideCallApproval({
      ctx: c.get("ctx"),
      input: {
        environmentId: c.get("environment").current.id,
        taskId: c.get("taskId"),
        callApprovalId,
        decision,
      },
    });
    return c.redirect(
      `${pagePath(callApprovalId)}?done=${decision === "approve" ? "approved" : "rejected"}`,
      303,
    );
  });
}
