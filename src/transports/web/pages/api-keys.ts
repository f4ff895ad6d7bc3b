import type { Context, Hono } from "hono";
import { requirePermission } from "../../../context.ts";
import { AppError, isAppError } from "../../../errors.ts";
import { createApiKey } from "../../../features/api-keys/create-api-key.ts";
import { listApiKeys } from "../../../features/api-keys/list-api-keys.ts";
import { revokeApiKey } from "../../../features/api-keys/revoke-api-key.ts";
import { CreateApiKeyBody } from "../../../features/api-keys/schemas.ts";
import { listMembers } from "../../../features/members/list-members.ts";
import { apiOnlyPermissions, type Permission, permissions } from "../../../permissions.ts";
import { allPages } from "../all-pages.ts";
import type { WebEnv } from "../env.ts";
import {
  checkAll,
  checkboxGroup,
  errorSummary,
  type FormState,
  fieldError,
  formString,
  formStrings,
  inputField,
  notice,
  parseWith,
  postForm,
  readForm,
  refusalState,
} from "../forms.ts";
import { dataTable, formatTime, type Html, hiddenText, html, join, when } from "../html.ts";
import { confirmPage, renderPage } from "../layout.ts";

/**
 * What the UI's key dialog offers: every permission except the MCP connection ones, which
 * owners and admins grant through the key API only (spec 5.2).
 */
const offeredPermissions: readonly Permission[] = permissions.filter((p) => !apiOnlyPermissions.includes(p));

const permissionHints: Partial<Record<Permission, string>> = {
  "environments:manage": "create and rename environments",
  "api_keys:manage": "create and revoke keys",
  "tasks:manage": "start and cancel tasks",
  "publishable_keys:manage": "create and revoke telemetry keys",
};

type KeysState = FormState & {
  created?: { name: string; secret: string };
  form?: { name: string; permissions: string[] };
};

async function keysPage(c: Context<WebEnv>, state: KeysState = {}): Promise<Response> {
  const ctx = c.get("ctx");
  const base = `/orgs/${c.get("org").id}/api-keys`;
  const keys = await allPages((cursor) => listApiKeys({ ctx, input: { pageSize: 200, cursor } }));
  const emails = new Map((await listMembers({ ctx })).map((m) => [m.userId, m.email]));
  const rows = keys.map(
    (k) => html`<tr>
    <td>${k.name}<br><code class="muted">${k.prefix}…</code></td>
    <td>${emails.get(k.userId) ?? k.userId}</td>
    <td>${join(k.permissions.map((p) => html`<code>${p}</code><br>`))}</td>
    <td>${formatTime(k.createdAt)}<br><span class="muted">${k.lastUsedAt ? `used ${formatTime(k.lastUsedAt)}` : "never used"}</span></td>
    <td>${
      k.revokedAt
        ? html`<span class="badge disabled">Revoked</span>`
        : html`<a class="button secondary" href="${base}/${k.id}/revoke">Revoke…<span class="visually-hidden"> ${k.name}</span></a>`
    }</td>
  </tr>`,
  );
  const chosen = new Set(state.form?.permissions ?? ["environments:read"]);
  const body: Html = html`${notice(state.flash)}
${errorSummary(state.error, state.fields)}
${when(
  state.created,
  () => html`<div class="alert success" role="status">
  <p>Key <strong>${state.created?.name}</strong> created. Copy it now: it is shown only once and cannot be recovered.</p>
  <code class="secret" id="new-key">${state.created?.secret}</code>
  <div class="actions"><button type="button" class="secondary" data-copy="new-key">Copy key</button></div>
</div>`,
)}
${dataTable({
  caption: "API keys",
  headers: ["Name", "Belongs to", "Permissions", "Created", hiddenText("Status")],
  rows,
  empty: html`<p class="muted">No keys yet.</p>`,
})}
<h2>Create a key</h2>
<div class="card">
${postForm(c, {
  action: base,
  label: "Create a key",
  body: html`${inputField({ name: "name", label: "Name", value: state.form?.name ?? "", error: state.fields?.name, required: true, placeholder: "CI deploys", autocomplete: "off" })}
  ${checkboxGroup({
    name: "permissions",
    legend: "Permissions",
    options: offeredPermissions.map((p) => ({ value: p, label: p, hint: permissionHints[p] })),
    checked: chosen,
    error: state.fields?.permissions,
  })}
  <p class="hint">The key acts as you, with at most these permissions and your role. The MCP connection permissions
  (<code>mcp_connections:read</code>, <code>mcp_connections:manage</code>) are not offered here: an owner or
  administrator grants them through the API (<code>POST /api/v1/api-keys</code>).</p>
  <div class="actions"><button type="submit">Create key</button></div>`,
})}
</div>`;
  return renderPage(c, { title: "API keys", section: "api-keys", status: state.status ?? 200, body });
}

const done: Record<string, string> = { revoked: "The key was revoked. It stops working at once." };

export function registerApiKeyPages(web: Hono<WebEnv>): void {
  const base = "/orgs/:orgId/api-keys";

  web.get(base, (c) => keysPage(c, { flash: done[c.req.query("done") ?? ""] }));

  web.post(base, async (c) => {
    const form = await readForm(c);
    const name = formString(form, "name");
    const chosen = formStrings(form, "permissions");
    try {
      const refused = chosen.filter((p) => !(offeredPermissions as readonly string[]).includes(p));
      // Every error at once: the name's and the permissions'.
      checkAll([
        () => parseWith(CreateApiKeyBody.pick({ name: true }), { name }),
        () => {
          if (refused.length > 0) {
            throw fieldError(
              "permissions",
              `Not offered here: ${refused.join(", ")}. Grant them through the API.`,
            );
          }
          if (chosen.length === 0) throw fieldError("permissions", "Choose at least one permission.");
        },
      ]);
      const input = parseWith(CreateApiKeyBody, { name, permissions: chosen });
      const { apiKey, secret } = await createApiKey({ ctx: c.get("ctx"), input });
      return keysPage(c, { status: 201, created: { name: apiKey.name, secret } });
    } catch (error) {
      if (!isAppError(error) || error.code !== "invalid_request") throw error;
      return keysPage(c, { ...refusalState(error), form: { name, permissions: chosen } });
    }
  });

  // Revoking stops every client using the key at once: a page asks first, as for telemetry keys.
  web.get(`${base}/:apiKeyId/revoke`, async (c) => {
    const ctx = c.get("ctx");
    requirePermission(ctx, "api_keys:manage");
    const list = `/orgs/${c.get("org").id}/api-keys`;
    const apiKeyId = c.req.param("apiKeyId");
    const key = (await allPages((cursor) => listApiKeys({ ctx, input: { pageSize: 200, cursor } }))).find(
      (k) => k.id === apiKeyId,
    );
    if (!key) throw new AppError("not_found", `API key ${apiKeyId} was not found.`);
    if (key.revokedAt) return c.redirect(list, 303);
    return confirmPage(c, {
      title: `Revoke ${key.name}?`,
      section: "api-keys",
      text: html`<p>Every client using <strong>${key.name}</strong> (<code>${key.prefix}…</code>) is refused from its next
  request on. A revoked key cannot be restored; create a new one instead.</p>`,
      action: `${list}/${key.id}/revoke`,
      label: "Confirm revocation",
      button: html`<button type="submit" class="danger">Revoke key</button>`,
      cancel: list,
    });
  });

  web.post(`${base}/:apiKeyId/revoke`, async (c) => {
    await revokeApiKey({ ctx: c.get("ctx"), input: { apiKeyId: c.req.param("apiKeyId") } });
    return c.redirect(`/orgs/${c.get("org").id}/api-keys?done=revoked`, 303);
  });
}
