import type { Context, Hono } from "hono";
import { requireOwnerOrAdmin, requirePermission } from "../../../context.ts";
import { AppError, isAppError } from "../../../errors.ts";
import { listMembers } from "../../../features/members/list-members.ts";
import { createPublishableKey } from "../../../features/publishable-keys/create-publishable-key.ts";
import { listPublishableKeys } from "../../../features/publishable-keys/list-publishable-keys.ts";
import { revokePublishableKey } from "../../../features/publishable-keys/revoke-publishable-key.ts";
import { CreatePublishableKeyBody, type PublishableKey } from "../../../features/publishable-keys/schemas.ts";
import { allPages } from "../all-pages.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FormState,
  formString,
  inputField,
  notice,
  parseWith,
  postForm,
  readForm,
  refusalState,
} from "../forms.ts";
import { dataTable, formatTime, type Html, html, when } from "../html.ts";
import { confirmPage, renderPage } from "../layout.ts";
import { environmentPath, mayManage } from "./telemetry-view.ts";

type KeysState = FormState & { created?: { name: string; key: string }; name?: string };

const PLACEHOLDER = "pk_…";

/**
 * The lines to give an OpenTelemetry SDK or Collector. The header value is quoted for the shell
 * (it holds a space); SDKs read `authorization=Bearer pk_…` from the variable as it is.
 */
function otlpSnippet(c: Context<WebEnv>, key: string, id: string): Html {
  const endpoint = c.get("deps").config.baseUrl;
  return html`<pre id="${id}">OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}
OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer ${key}"</pre>`;
}

function keyRow(c: Context<WebEnv>, key: PublishableKey, emails: Map<string, string>, manage: boolean): Html {
  const base = environmentPath(c, "telemetry-keys");
  return html`<tr>
    <td>${key.name}<br><code class="muted">${key.prefix}…</code></td>
    <td>${formatTime(key.createdAt)}<br><span class="muted">by ${emails.get(key.createdBy) ?? key.createdBy}</span></td>
    <td>${key.lastUsedAt ? formatTime(key.lastUsedAt) : html`<span class="muted">never</span>`}</td>
    <td>${
      key.revokedAt
        ? html`<span class="badge disabled">Revoked</span><br><span class="muted">${formatTime(key.revokedAt)}</span>`
        : manage
          ? html`<a class="button secondary" href="${base}/${key.id}/revoke">Revoke…<span class="visually-hidden"> ${key.name}</span></a>`
          : html`<span class="badge ready">Active</span>`
    }</td>
  </tr>`;
}

/** Every key of the page's environment. */
const environmentKeys = (c: Context<WebEnv>) =>
  allPages((cursor) =>
    listPublishableKeys({
      ctx: c.get("ctx"),
      input: { environmentId: c.get("environment").current.id, pageSize: 200, cursor },
    }),
  );

async function keysPage(c: Context<WebEnv>, state: KeysState = {}): Promise<Response> {
  const ctx = c.get("ctx");
  const environment = c.get("environment").current;
  const keys = await environmentKeys(c);
  const emails = new Map((await listMembers({ ctx })).map((m) => [m.userId, m.email]));
  const manage = mayManage(c);
  const created = state.created;
  const body: Html = html`${notice(state.flash)}
${errorSummary(state.error, state.fields)}
${when(
  created,
  () => html`<div class="alert success" role="status">
  <p>Telemetry key <strong>${created?.name}</strong> created. Copy it now: it is shown only once and cannot be recovered.</p>
  <code class="secret" id="new-key">${created?.key}</code>
  <p>Give an OpenTelemetry SDK or Collector these settings:</p>
  ${otlpSnippet(c, created?.key ?? PLACEHOLDER, "new-key-snippet")}
  <div class="actions"><button type="button" class="secondary" data-copy="new-key">Copy key</button>
  <button type="button" class="secondary" data-copy="new-key-snippet">Copy settings</button></div>
</div>`,
)}
${when(
  !created,
  () => html`<h2>Sending telemetry</h2>
<div class="card">
  <p>Point any OpenTelemetry SDK or Collector at patchbay (OTLP/HTTP, protobuf or JSON, on
  <code>/v1/traces</code>, <code>/v1/logs</code> and <code>/v1/metrics</code>) with a key of this environment:</p>
  ${otlpSnippet(c, PLACEHOLDER, "otlp-snippet")}
  <div class="actions"><button type="button" class="secondary" data-copy="otlp-snippet">Copy settings</button></div>
  <p class="hint">A telemetry key can only send telemetry into ${environment.name}, so it may be built into
  applications. The header <code>x-patchbay-key: pk_…</code> works too.</p>
</div>`,
)}
<h2>Keys</h2>
${dataTable({
  caption: `Telemetry keys of ${environment.name}`,
  headers: ["Name", "Created", "Last used", "Status"],
  rows: keys.map((k) => keyRow(c, k, emails, manage)),
  empty: html`<p class="muted">No telemetry keys in this environment yet.</p>`,
})}
${
  manage
    ? html`<h2>Create a key</h2>
<div class="card">
${postForm(c, {
  action: environmentPath(c, "telemetry-keys"),
  label: "Create a telemetry key",
  body: html`${inputField({ name: "name", label: "Name", value: state.name ?? "", error: state.fields?.name, required: true, placeholder: "web frontend", autocomplete: "off", hint: "Which application or collector uses it." })}
  <div class="actions"><button type="submit">Create key</button></div>`,
})}
</div>`
    : html`<p class="muted">Only an owner or administrator can create and revoke telemetry keys.</p>`
}`;
  return renderPage(c, {
    title: "Telemetry keys",
    section: "telemetry-keys",
    lead: `Publishable keys that let applications send traces, logs and metrics into ${environment.name}.`,
    status: state.status ?? 200,
    body,
  });
}

const done: Record<string, string> = {
  revoked: "The key was revoked. Telemetry sent with it is refused from the next request on.",
};

export function registerTelemetryKeyPages(web: Hono<WebEnv>): void {
  const base = "/orgs/:orgId/environments/:environmentId/telemetry-keys";

  web.get(base, (c) => keysPage(c, { flash: done[c.req.query("done") ?? ""] }));

  web.post(base, async (c) => {
    const name = formString(await readForm(c), "name");
    try {
      const input = parseWith(CreatePublishableKeyBody, { name });
      const environmentId = c.get("environment").current.id;
      const created = await createPublishableKey({ ctx: c.get("ctx"), input: { environmentId, ...input } });
      return keysPage(c, { status: 201, created: { name: created.publishableKey.name, key: created.key } });
    } catch (error) {
      if (!isAppError(error) || (error.code !== "invalid_request" && error.code !== "limit_exceeded")) {
        throw error;
      }
      return keysPage(c, { ...refusalState(error), name });
    }
  });

  // Revoking stops every application that sends with the key: a page asks first.
  web.get(`${base}/:keyId/revoke`, async (c) => {
    const ctx = c.get("ctx");
    requirePermission(ctx, "publishable_keys:manage");
    requireOwnerOrAdmin(ctx);
    const keyId = c.req.param("keyId");
    // One of this environment's keys (another's is 404).
    const key = (await environmentKeys(c)).find((k) => k.id === keyId);
    if (!key) throw new AppError("not_found", `Publishable key ${keyId} was not found.`);
    const list = environmentPath(c, "telemetry-keys");
    if (key.revokedAt) return c.redirect(list, 303);
    return confirmPage(c, {
      title: `Revoke ${key.name}?`,
      section: "telemetry-keys",
      text: html`<p>Applications sending telemetry with <strong>${key.name}</strong> (<code>${key.prefix}…</code>) are refused from
  their next request on. A revoked key cannot be restored; create a new one instead.</p>`,
      action: `${list}/${key.id}/revoke`,
      label: "Confirm revocation",
      button: html`<button type="submit" class="danger">Revoke key</button>`,
      cancel: list,
    });
  });

  web.post(`${base}/:keyId/revoke`, async (c) => {
    const environmentId = c.get("environment").current.id;
    await revokePublishableKey({ ctx: c.get("ctx"), input: { environmentId, keyId: c.req.param("keyId") } });
    return c.redirect(`${environmentPath(c, "telemetry-keys")}?done=revoked`, 303);
  });
}
