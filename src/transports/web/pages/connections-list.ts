import type { Context, Hono } from "hono";
import { MAX_READY_CONNECTIONS, MAX_READY_TOOLS } from "../../../features/connections/limits.ts";
import { listConnections } from "../../../features/connections/read-connections.ts";
import type { Connection } from "../../../features/connections/schemas.ts";
import { allPages } from "../all-pages.ts";
import type { WebEnv } from "../env.ts";
import { notice } from "../forms.ts";
import { type Html, html, join, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import {
  authSummary,
  connectionsPath,
  healthSummary,
  readinessBadge,
  webNextStep,
} from "./connection-view.ts";

/** What counts against the environment's limits: ready connections and their approved tools. */
function readyCounts(connections: readonly Connection[]): { connections: number; tools: number } {
  const ready = connections.filter((c) => c.readiness === "ready");
  return {
    connections: ready.length,
    tools: ready.reduce((sum, c) => sum + (c.approval?.toolCount ?? 0), 0),
  };
}

const meter = (label: string, value: number, limit: number): Html =>
  html`<div class="meter${value >= limit ? " full" : ""}"><span class="muted">${label}</span><br><strong>${value}</strong> / ${limit}</div>`;

const done: Record<string, string> = { deleted: "The connection was deleted." };

async function listPage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const base = connectionsPath(c.get("org").id, current.id);
  const ctx = c.get("ctx");
  // All of them: the counts against the limits need every connection, not one page.
  const connections = await allPages((cursor) =>
    listConnections({ ctx, input: { environmentId: current.id, pageSize: 200, cursor } }),
  );
  const counts = readyCounts(connections);
  const rows = connections.map(
    (conn) => html`<tr>
    <td data-label="Connection"><a href="${base}/${conn.id}">${conn.displayName}</a><br><code class="muted">${conn.alias}</code></td>
    <td data-label="Server">${conn.endpointOrigin}<br><span class="muted">${authSummary(conn)}</span></td>
    <td data-label="Readiness">${readinessBadge(conn.readiness)}</td>
    <td data-label="Health">${healthSummary(conn)}</td>
    <td data-label="Next step">${webNextStep(conn, base)}</td>
    <td data-label="Approved tools">${conn.approval ? `${conn.approval.toolCount}${conn.approval.stale ? " (stale)" : ""}` : "—"}</td>
  </tr>`,
  );
  return renderPage(c, {
    title: "Connections",
    section: "connections",
    lead: `Remote MCP servers whose approved tools the task agent may use in ${current.name}.`,
    body: html`${notice(done[c.req.query("done") ?? ""])}
<div class="meters" aria-label="Limits">
  ${meter("Ready connections", counts.connections, MAX_READY_CONNECTIONS)}
  ${meter("Ready tools", counts.tools, MAX_READY_TOOLS)}
</div>
<p><a class="button" href="${base}/new">New connection</a></p>
${
  connections.length === 0
    ? html`<div class="card"><p>No connections in this environment yet. Create one, set its credential, discover its
  tools, approve the ones the agent may use, then enable it.</p></div>`
    : html`<table class="stack">
  <caption class="visually-hidden">Connections in ${current.name}</caption>
  <thead><tr><th scope="col">Connection</th><th scope="col">Server</th><th scope="col">Readiness</th><th scope="col">Health</th><th scope="col">Next step</th><th scope="col">Approved tools</th></tr></thead>
  <tbody>${join(rows)}</tbody>
</table>`
}
${when(connections.length > 0, () => html`<p class="muted">Only ready connections count against the limits.</p>`)}`,
  });
}

export function registerConnectionListPage(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/connections", listPage);
}
