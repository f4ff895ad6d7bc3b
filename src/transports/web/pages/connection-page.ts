import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import {
  type ConnectionReview,
  getConnectionReview,
} from "../../../features/connections/read-connections.ts";
import type { Connection } from "../../../features/connections/schemas.ts";
import type { ToolDefinition } from "../../../platform/db/schema/mcp-connections.ts";
import type { WebEnv } from "../env.ts";
import { errorSummary, type FieldErrors, inputField, notice, postForm } from "../forms.ts";
import { formatTime, type Html, html, join, nothing, tableScroll, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { type ConnectionFormValues, endpointFields } from "./connection-form.ts";
import {
  authSummary,
  connectionsPath,
  healthSummary,
  readinessBadge,
  webNextStep,
} from "./connection-view.ts";

type ReviewedTool = NonNullable<ConnectionReview["discovery"]>["tools"][number];

export type ConnectionPageState = {
  status?: ContentfulStatusCode;
  error?: string;
  fields?: FieldErrors;
  /** The form was posted with a revision the connection no longer has. */
  conflict?: { seen: number };
  flash?: string;
  /** What the settings form held when it was refused. */
  settings?: Partial<ConnectionFormValues>;
};

const done: Record<string, string> = {
  created: "Connection created. It is disabled, has no credential and no approved tools yet.",
  credential_set: "The credential was checked against the server and stored. It will not be shown again.",
  discovered: "Discovery finished. Review the tools below and approve the ones the agent may use.",
  approved: "Approval saved. Enable the connection when you are ready.",
  enabled: "Enabled. New tasks in this environment receive its approved tools.",
  disabled: "Disabled. New tasks no longer receive it; running tasks fail at their next call to it.",
  updated: "Saved.",
};
export const doneMessage = (key: string | undefined): string | undefined => done[key ?? ""];

const hidden = (name: string, value: string | number): Html =>
  html`<input type="hidden" name="${name}" value="${value}">`;

function facts(conn: Connection): Html {
  const credential =
    conn.auth.kind === "none"
      ? "Not needed"
      : conn.auth.credentialUpdatedAt
        ? `Set ${formatTime(conn.auth.credentialUpdatedAt)}`
        : "Missing";
  return html`<dl class="facts">
  <dt>Alias</dt><dd><code>${conn.alias}</code></dd>
  <dt>Server</dt><dd>${conn.endpointOrigin} <span class="muted">(the full URL is never shown)</span></dd>
  <dt>Authentication</dt><dd>${authSummary(conn)}</dd>
  <dt>Credential</dt><dd>${credential}</dd>
  <dt>Enabled</dt><dd>${conn.enabled ? "Yes" : "No"}</dd>
  <dt>Health</dt><dd>${healthSummary(conn, true)}</dd>
  <dt>Approved tools</dt><dd>${
    conn.approval
      ? `${conn.approval.toolCount} (${conn.approval.tools.filter((t) => t.access === "read").length} read, ${conn.approval.tools.filter((t) => t.access === "write").length} write), ${formatTime(conn.approval.approvedAt)}${conn.approval.stale ? " — stale: the endpoint or authentication changed since" : ""}`
      : "None"
  }</dd>
  <dt>Last discovery</dt><dd>${conn.discovery ? `${conn.discovery.toolCount} tools, ${formatTime(conn.discovery.discoveredAt)}` : "Never"}</dd>
  <dt>Revision</dt><dd>${conn.revision}</dd>
</dl>`;
}

/** MCP tool annotations (hints the server gives) as short badges; unknown ones by their name. */
const hintBadges: Record<string, { true?: [string, string]; false?: [string, string] }> = {
  readOnlyHint: { true: ["read-only", "hint-ok"] },
  destructiveHint: { true: ["destructive", "hint-bad"], false: ["non-destructive", "hint"] },
  idempotentHint: { true: ["idempotent", "hint"] },
  openWorldHint: { true: ["open world", "hint"], false: ["closed world", "hint"] },
};

function annotations(tool: ToolDefinition): Html {
  const badges = Object.entries(tool.annotations ?? {}).flatMap(([key, value]) => {
    if (key === "title") return [];
    const known = hintBadges[key];
    if (known) {
      const badge = value === true ? known.true : value === false ? known.false : undefined;
      return badge
        ? [html`<span class="badge ${badge[1]}" title="${key}: ${String(value)}">${badge[0]}</span>`]
        : [];
    }
    return [
      html`<span class="badge hint" title="${key}: ${JSON.stringify(value)}">${key.replace(/Hint$/, "")}</span>`,
    ];
  });
  return badges.length > 0 ? html`<span class="hints">${join(badges)}</span>` : nothing;
}

/**
 * The description and schemas, on demand: the description's first line is the disclosure's
 * summary, so a 13-tool server stays a screen or two tall.
 */
function toolDetails(tool: ToolDefinition): Html {
  const first = tool.description?.split("\n", 1)[0]?.trim() || "Input schema";
  return html`<details class="tool-more"><summary><span class="tool-desc">${first}</span><span class="visually-hidden"> — details of ${tool.name}</span></summary>
  ${when(tool.description, () => html`<p class="tool-desc-full">${tool.description}</p>`)}
  <p class="muted">Input schema</p><pre>${JSON.stringify(tool.inputSchema, null, 2)}</pre>${when(
    tool.outputSchema,
    () => html`<p class="muted">Output schema</p><pre>${JSON.stringify(tool.outputSchema, null, 2)}</pre>`,
  )}
  ${when(Object.keys(tool.annotations ?? {}).length > 0, () => html`<p class="muted">Annotations</p><pre>${JSON.stringify(tool.annotations, null, 2)}</pre>`)}
</details>`;
}

/**
 * A write tool's calls each wait for a person; the owner may attest, tool by tool, that one only
 * reads (docs/tasks.md). The attestation box sits with the tool it is about.
 */
function accessCell(tool: ReviewedTool, index: number, attested: boolean, canApprove: boolean): Html {
  if (tool.access === "read") {
    return html`<span class="badge ready" title="the agent calls it on its own">Read</span>`;
  }
  const id = `attest-${index}`;
  return html`<span class="badge no" title="every call waits for an owner or admin">Write</span>
<span class="check attest"><input type="checkbox" id="${id}" name="attestReadOnly" value="${tool.name}"${attested ? html` checked` : nothing}${
    tool.approvable && canApprove ? nothing : html` disabled`
  }> <label for="${id}">Attest it only reads</label></span>`;
}

function toolRow(
  tool: ReviewedTool,
  index: number,
  state: { checked: boolean; attested: boolean },
  canApprove: boolean,
): Html {
  const id = `tool-${index}`;
  const checked = state.checked;
  return html`<tr>
  <td><input type="checkbox" id="${id}" name="toolNames" value="${tool.name}"${checked ? html` checked` : nothing}${
    tool.approvable && canApprove ? nothing : html` disabled`
  }></td>
  <td><label for="${id}"><strong>${tool.name}</strong>${when(tool.title, () => html` — ${tool.title}`)}</label>
    ${annotations(tool)}${when(!tool.approvable, () => html`<p class="field-error">Not approvable: ${tool.reason ?? "refused"}</p>`)}
    ${toolDetails(tool)}</td>
  <td>${accessCell(tool, index, state.attested, canApprove)}</td>
</tr>`;
}

function toolsSection(
  c: Context<WebEnv>,
  base: string,
  review: ConnectionReview,
  state: ConnectionPageState,
): Html {
  const { connection: conn, discovery } = review;
  const approved = new Set(review.discoveryCurrent ? review.approvedTools.map((t) => t.name) : []);
  const attested = new Set(
    review.discoveryCurrent ? (conn.approval?.tools ?? []).filter((t) => t.attested).map((t) => t.name) : [],
  );
  const discoverForm = postForm(c, {
    action: `${base}/discover`,
    busy: "Connecting to the server and listing its tools…",
    label: "Discover tools",
    body: html`${hidden("revision", conn.revision)}<button type="submit"${
      conn.readiness === "credential_missing" ? html` class="secondary"` : nothing
    }>${discovery ? "Discover again" : "Discover tools"}</button>`,
  });
  if (!discovery) {
    return html`<p>Discovery connects to the server, lists its tools and shows them here for review.</p>${discoverForm}`;
  }
  return html`<p>${discovery.tools.length} tools found ${formatTime(discovery.discoveredAt)}.
  Select the ones the task agent may use; approving replaces the current approval. The agent calls
  <strong>read</strong> tools on its own; each call of a <strong>write</strong> tool waits for an owner or
  admin to approve it. A tool is read only when the server annotates it read-only and not destructive, or
  when you attest that it only reads.</p>
${discoverForm}
${when(!review.discoveryCurrent, () =>
  notice(
    "This discovery was made before the endpoint or authentication changed. Discover again to approve from the current server.",
    "warning",
  ),
)}
${postForm(c, {
  action: `${base}/approve`,
  label: "Approve tools",
  body: html`${hidden("revision", conn.revision)}${hidden("discoveryId", discovery.id)}
  ${when(state.fields?.toolNames, () => html`<p class="field-error" id="f-toolNames-error">${state.fields?.toolNames}</p>`)}
  ${tableScroll(html`<table class="tools" id="f-toolNames">
    <caption class="visually-hidden">Discovered tools</caption>
    <colgroup><col class="col-approve"><col><col class="col-access"></colgroup>
    <thead><tr><th scope="col">Approve</th><th scope="col">Tool</th><th scope="col">Access</th></tr></thead>
    <tbody>${join(
      discovery.tools.map((t, i) =>
        toolRow(
          t,
          i,
          { checked: approved.has(t.name), attested: attested.has(t.name) },
          review.discoveryCurrent,
        ),
      ),
    )}</tbody>
  </table>`)}
  <div class="actions"><button type="submit"${review.discoveryCurrent ? nothing : html` disabled`}>Approve selected tools</button></div>`,
})}`;
}

function conflictNotice(seen: number, now: number, reload: string): Html {
  return html`<div class="alert warning" role="alert">
  <p><strong>This connection changed since you loaded this page</strong> (you saw revision ${seen}; it is now
  revision ${now}). Nothing was changed by your last action. The page below shows the current state: review it
  and repeat your change if it still makes sense.</p>
  <p><a href="${reload}">Reload the page</a></p>
</div>`;
}

/** The connection's page: status, then the lifecycle in order — credential, tools, enablement, settings, deletion. */
export async function connectionPage(c: Context<WebEnv>, state: ConnectionPageState = {}): Promise<Response> {
  const environment = c.get("environment").current;
  const connectionId = c.req.param("connectionId") ?? "";
  const review = await getConnectionReview({
    ctx: c.get("ctx"),
    input: { environmentId: environment.id, connectionId },
  });
  const conn = review.connection;
  const list = connectionsPath(c.get("org").id, environment.id);
  const base = `${list}/${conn.id}`;
  const settings = state.settings ?? {
    displayName: conn.displayName,
    authKind: conn.auth.kind,
    headerName: conn.auth.headerName ?? "",
  };
  const fields = state.fields ?? {};
  const body = html`<p><a href="${list}">← Connections in ${environment.name}</a></p>
<h1>${conn.displayName} ${readinessBadge(conn.readiness)}</h1>
${notice(state.flash)}
${state.conflict ? conflictNotice(state.conflict.seen, conn.revision, base) : errorSummary(state.error, fields)}
<div class="card">
  <p><strong>Next step:</strong> ${webNextStep(conn, list)}</p>
  ${facts(conn)}
</div>

${when(
  conn.auth.kind !== "none",
  () => html`<h2 id="credential">Credential</h2>
<div class="card">
${postForm(c, {
  action: `${base}/credential`,
  busy: "Checking the credential against the server…",
  label: "Set credential",
  body: html`${hidden("revision", conn.revision)}
  ${inputField({
    name: "value",
    label: conn.auth.kind === "bearer" ? "Bearer token" : `Value of ${conn.auth.headerName ?? "the header"}`,
    type: "password",
    autocomplete: "off",
    hint: "Checked against the server before it replaces the current one. Stored encrypted; never shown again.",
    error: fields.value,
  })}
  <div class="actions"><button type="submit">${conn.auth.credentialReady ? "Replace credential" : "Set credential"}</button></div>`,
})}
</div>`,
)}

<h2 id="tools">Tools</h2>
<div class="card">${toolsSection(c, base, review, state)}</div>

<h2 id="enablement">Enablement</h2>
<div class="card">
  <p>${
    conn.enabled
      ? "Enabled: new tasks in this environment receive the approved tools."
      : "Disabled: no task receives this connection. Enabling needs a current approval and, if the server needs one, a credential."
  }</p>
  ${postForm(c, {
    action: `${base}/enablement`,
    label: conn.enabled ? "Disable" : "Enable",
    body: html`${hidden("revision", conn.revision)}${hidden("enabled", conn.enabled ? "false" : "true")}
    <button type="submit"${conn.enabled ? html` class="secondary"` : nothing}>${conn.enabled ? "Disable…" : "Enable"}</button>`,
  })}
</div>

<h2 id="settings">Settings</h2>
<div class="card">
${postForm(c, {
  action: `${base}/update`,
  label: "Settings",
  body: html`${hidden("revision", conn.revision)}
  ${inputField({ name: "displayName", label: "Display name", value: settings.displayName ?? "", error: fields.displayName, required: true })}
  ${endpointFields(settings, fields, {
    endpointHint:
      "Leave empty to keep the current URL. Changing the endpoint or authentication needs the connection disabled and makes the approval stale; moving to another server or changing the kind destroys the credential.",
    endpointRequired: false,
  })}
  <div class="actions"><button type="submit">Save settings</button></div>`,
})}
</div>

<h2 id="delete">Delete</h2>
<div class="card">
  ${
    conn.enabled
      ? html`<p>Disable the connection before deleting it.</p>`
      : postForm(c, {
          action: `${base}/deletion-preview`,
          label: "Delete",
          body: html`${hidden("revision", conn.revision)}<p>Deleting shows what would be lost and asks you to confirm.</p>
        <button type="submit" class="danger">Delete…</button>`,
        })
  }
</div>
<p class="muted">Created ${formatTime(conn.createdAt)} · updated ${formatTime(conn.updatedAt)}</p>`;
  return renderPage(c, {
    title: conn.displayName,
    heading: false,
    section: "connections",
    status: state.status ?? 200,
    body,
  });
}
