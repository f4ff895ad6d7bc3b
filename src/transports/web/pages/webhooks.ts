import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhook,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type WebhookEndpoint,
  webhookEventTypes,
} from "../../../features/webhooks/index.ts";
import { allPages } from "../all-pages.ts";
import type { WebEnv } from "../env.ts";
import {
  checkboxGroup,
  errorSummary,
  type FormState,
  formString,
  formStrings,
  inputField,
  notice,
  postForm,
  readForm,
  refusalState,
} from "../forms.ts";
import { dataTable, formatTime, type Html, hiddenText, html, join, nothing, when } from "../html.ts";
import { confirmPage, renderPage } from "../layout.ts";

const eventHints: Record<string, string> = {
  "operator_approval.requested": "a remediation waits for someone to approve its change",
  "pull_request.awaiting_review": "a remediation's pull request waits for review",
  "remediation.failed": "a remediation run failed",
  "problem.new": "a new error was seen",
  "problem.regressed": "a resolved problem came back",
  "connection.credential_rejected": "an MCP server started rejecting its connection's credential",
};

const stateBadge = (e: WebhookEndpoint): Html =>
  e.enabled
    ? html`<span class="badge ready">Enabled</span>`
    : e.disabledReason === "failing"
      ? html`<span class="badge no">Disabled: failing</span>`
      : html`<span class="badge disabled">Disabled</span>`;

const secretAlert = (what: string, secret: string): Html => html`<div class="alert success" role="status">
  <p>${what} Copy the signing secret now: it is shown only once and cannot be recovered.</p>
  <code class="secret" id="new-secret">${secret}</code>
  <div class="actions"><button type="button" class="secondary" data-copy="new-secret">Copy secret</button></div>
</div>`;

type ListState = FormState & { created?: string; form?: { url: string; eventTypes: string[] } };

async function listPage(c: Context<WebEnv>, state: ListState = {}): Promise<Response> {
  const ctx = c.get("ctx");
  const orgId = c.get("org").id;
  const base = `/orgs/${orgId}/webhooks`;
  const endpoints = await allPages((cursor) =>
    listWebhookEndpoints({ ctx, input: { organizationId: orgId, pageSize: 200, cursor } }),
  );
  const rows = endpoints.map(
    (e) => html`<tr>
    <td><a href="${base}/${e.id}">${e.url}</a>${e.description ? html`<br><span class="muted">${e.description}</span>` : nothing}</td>
    <td>${join(e.eventTypes.map((t) => html`<code>${t}</code><br>`))}</td>
    <td>${stateBadge(e)}</td>
    <td>${e.lastSuccessAt ? formatTime(e.lastSuccessAt) : "Never"}${
      e.failedDeliveriesInRow > 0
        ? html`<br><span class="muted">${e.failedDeliveriesInRow} failed in a row</span>`
        : nothing
    }</td>
  </tr>`,
  );
  const chosen = new Set(state.form?.eventTypes ?? []);
  const body = html`${notice(state.flash)}
${errorSummary(state.error, state.fields)}
${when(state.created, () => secretAlert("Endpoint created.", state.created ?? ""))}
${dataTable({
  caption: "Webhook endpoints",
  headers: ["Endpoint", "Events", "State", "Last success"],
  rows,
  empty: html`<p class="muted">No webhook endpoints yet.</p>`,
})}
<h2>Add an endpoint</h2>
<div class="card">
${postForm(c, {
  action: base,
  label: "Add a webhook endpoint",
  body: html`${inputField({ name: "url", label: "URL", value: state.form?.url ?? "", error: state.fields?.url, required: true, placeholder: "https://hooks.example.com/patchbay", autocomplete: "off" })}
  ${checkboxGroup({
    name: "eventTypes",
    legend: "Events",
    options: webhookEventTypes.map((t) => ({ value: t, label: t, hint: eventHints[t] })),
    checked: chosen,
    error: state.fields?.eventTypes,
  })}
  <p class="hint">Deliveries are signed per Standard Webhooks; verify them with the secret shown after you add the
  endpoint (docs/webhooks.md). Public <code>https://</code> URLs only.</p>
  <div class="actions"><button type="submit">Add endpoint</button></div>`,
})}
</div>`;
  return renderPage(c, { title: "Webhooks", section: "webhooks", status: state.status ?? 200, body });
}

const done: Record<string, string> = {
  deleted: "The endpoint was deleted.",
  enabled: "The endpoint is enabled.",
  disabled: "The endpoint is disabled: new events are not sent to it.",
  redelivered: "The delivery was queued again.",
};

async function endpointPage(
  c: Context<WebEnv>,
  state: FormState & { secret?: string } = {},
): Promise<Response> {
  const ctx = c.get("ctx");
  const orgId = c.get("org").id;
  const endpointId = c.req.param("endpointId") ?? "";
  const input = { organizationId: orgId, endpointId };
  const endpoint = await getWebhookEndpoint({ ctx, input });
  const path = `/orgs/${orgId}/webhooks/${endpoint.id}`;
  const log = await listWebhookDeliveries({ ctx, input: { ...input, pageSize: 50 } });
  const rows = log.items.map((d) => {
    const last = d.lastAttempts[0];
    return html`<tr>
    <td><code>${d.eventType}</code><br><span class="muted">${formatTime(d.createdAt)}</span></td>
    <td><span class="badge ${d.status === "succeeded" ? "ready" : d.status === "failed" ? "no" : "approval_missing"}">${d.status}</span><br><span class="muted">${d.attempts} attempt${d.attempts === 1 ? "" : "s"}</span></td>
    <td>${
      last
        ? html`${last.responseStatus ?? last.errorCode ?? "?"} <span class="muted">in ${last.durationMs} ms</span>${
            last.responseBodyExcerpt
              ? html`<br><code class="muted">${last.responseBodyExcerpt.slice(0, 120)}</code>`
              : nothing
          }`
        : html`<span class="muted">Not tried yet</span>`
    }</td>
    <td>${
      d.status === "pending" || !endpoint.enabled
        ? nothing
        : postForm(c, {
            action: `${path}/deliveries/${d.id}/redeliver`,
            body: html`<button type="submit" class="secondary">Redeliver<span class="visually-hidden"> ${d.id}</span></button>`,
          })
    }</td>
  </tr>`;
  });
  const body = html`${notice(state.flash)}
${errorSummary(state.error, state.fields)}
${when(state.secret, () => secretAlert("The secret was rotated; the old one no longer signs.", state.secret ?? ""))}
<dl class="facts">
  <dt>URL</dt><dd>${endpoint.url}</dd>
  <dt>Events</dt><dd>${join(endpoint.eventTypes.map((t) => html`<code>${t}</code> `))}</dd>
  <dt>State</dt><dd>${stateBadge(endpoint)}${endpoint.failedDeliveriesInRow > 0 ? html` <span class="muted">${endpoint.failedDeliveriesInRow} deliveries failed in a row</span>` : nothing}</dd>
  <dt>Last success</dt><dd>${endpoint.lastSuccessAt ? formatTime(endpoint.lastSuccessAt) : "Never"}</dd>
  <dt>Secret</dt><dd>${endpoint.secretRotatedAt ? `Rotated ${formatTime(endpoint.secretRotatedAt)}` : "Set at creation"}</dd>
</dl>
<div class="actions">
${postForm(c, {
  action: `${path}/${endpoint.enabled ? "disable" : "enable"}`,
  body: html`<button type="submit" class="secondary">${endpoint.enabled ? "Disable" : "Enable"}</button>`,
})}
<a class="button secondary" href="${path}/rotate">Rotate secret…</a>
<a class="button danger" href="${path}/delete">Delete endpoint…</a>
</div>
<h2>Deliveries</h2>
${dataTable({
  caption: "Latest deliveries, newest first",
  headers: ["Event", "Status", "Last answer", hiddenText("Actions")],
  rows,
  empty: html`<p class="muted">Nothing delivered yet.</p>`,
})}`;
  return renderPage(c, { title: "Webhook endpoint", section: "webhooks", status: state.status ?? 200, body });
}

export function registerWebhookPages(web: Hono<WebEnv>): void {
  const base = "/orgs/:orgId/webhooks";
  web.get(base, (c) => listPage(c, { flash: done[c.req.query("done") ?? ""] }));
  web.post(base, async (c) => {
    const form = await readForm(c);
    const url = formString(form, "url");
    const eventTypes = formStrings(form, "eventTypes");
    try {
      const { secret } = await createWebhookEndpoint({
        ctx: c.get("ctx"),
        input: { organizationId: c.get("org").id, url, eventTypes },
      });
      return listPage(c, { status: 201, created: secret });
    } catch (error) {
      if (!isAppError(error) || error.status >= 500) throw error;
      return listPage(c, {
        ...refusalState(error, { invalid_webhook_url: "url", unknown_event_type: "eventTypes" }),
        form: { url, eventTypes },
      });
    }
  });
  const one = `${base}/:endpointId`;
  web.get(one, (c) => endpointPage(c, { flash: done[c.req.query("done") ?? ""] }));
  const input = (c: Context<WebEnv>) => ({
    organizationId: c.get("org").id,
    endpointId: c.req.param("endpointId") ?? "",
  });
  const back = (c: Context<WebEnv>, what: string) =>
    c.redirect(`/orgs/${c.get("org").id}/webhooks/${c.req.param("endpointId")}?done=${what}`, 303);
  for (const enabled of [true, false]) {
    web.post(`${one}/${enabled ? "enable" : "disable"}`, async (c) => {
      await updateWebhookEndpoint({ ctx: c.get("ctx"), input: { ...input(c), enabled } });
      return back(c, enabled ? "enabled" : "disabled");
    });
  }
  // Rotating and deleting break the receiver's next delivery (a signature it cannot verify, or none
  // at all): a page asks first, as for API keys and telemetry keys.
  const endpointPath = (c: Context<WebEnv>) =>
    `/orgs/${c.get("org").id}/webhooks/${c.req.param("endpointId")}`;
  web.get(`${one}/rotate`, async (c) => {
    const endpoint = await getWebhookEndpoint({ ctx: c.get("ctx"), input: input(c) });
    return confirmPage(c, {
      title: "Rotate the signing secret?",
      section: "webhooks",
      text: html`<p>The new secret is shown once. From then on deliveries to <strong>${endpoint.url}</strong> are signed
  with it only: the receiver must be given the new secret, or it will refuse them.</p>`,
      action: `${endpointPath(c)}/rotate`,
      label: "Confirm rotation",
      button: html`<button type="submit" class="danger">Rotate secret</button>`,
      cancel: endpointPath(c),
    });
  });
  web.get(`${one}/delete`, async (c) => {
    const endpoint = await getWebhookEndpoint({ ctx: c.get("ctx"), input: input(c) });
    return confirmPage(c, {
      title: "Delete this webhook endpoint?",
      section: "webhooks",
      text: html`<p>No event is sent to <strong>${endpoint.url}</strong> any more, and its delivery log is deleted
  with it. It cannot be restored; add the endpoint again instead (with a new secret).</p>`,
      action: `${endpointPath(c)}/delete`,
      label: "Confirm deletion",
      button: html`<button type="submit" class="danger">Delete endpoint</button>`,
      cancel: endpointPath(c),
    });
  });
  web.post(`${one}/rotate`, async (c) => {
    const { secret } = await rotateWebhookSecret({ ctx: c.get("ctx"), input: input(c) });
    return endpointPage(c, { secret });
  });
  web.post(`${one}/delete`, async (c) => {
    await deleteWebhookEndpoint({ ctx: c.get("ctx"), input: input(c) });
    return c.redirect(`/orgs/${c.get("org").id}/webhooks?done=deleted`, 303);
  });
  web.post(`${one}/deliveries/:deliveryId/redeliver`, async (c) => {
    try {
      await redeliverWebhook({
        ctx: c.get("ctx"),
        input: { ...input(c), deliveryId: c.req.param("deliveryId") ?? "" },
      });
      return back(c, "redelivered");
    } catch (error) {
      if (!isAppError(error) || error.status !== 409) throw error;
      return endpointPage(c, refusalState(error));
    }
  });
}
