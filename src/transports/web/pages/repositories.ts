import type { Context, Hono } from "hono";
import { requireOwnerOrAdmin, requirePermission } from "../../../context.ts";
import { deleteRepository } from "../../../features/repositories/delete-repository.ts";
import { getRepository, listRepositories } from "../../../features/repositories/read-repositories.ts";
import type { Repository } from "../../../features/repositories/schemas.ts";
import { allPages } from "../all-pages.ts";
import type { WebEnv } from "../env.ts";
import { notice } from "../forms.ts";
import { dataTable, formatTime, type Html, hiddenText, html, join, when } from "../html.ts";
import { confirmPage, renderPage } from "../layout.ts";
import { repositoriesPath } from "./remediation-view.ts";
import { githubInstallLink } from "./repository-create.ts";
import { mayManage } from "./telemetry-view.ts";

const done: Record<string, string> = {
  created: "The repository is registered. Runs waiting for its services resume by themselves.",
  deleted: "The registration was removed. patchbay's branches stay in the repository.",
};

/** Where the code is: a path on this machine or a GitHub repository. */
export const repositoryLocation = (r: Repository): Html =>
  r.provider === "local-git"
    ? html`<code>${r.path ?? ""}</code><br><span class="muted">local git</span>`
    : html`<code>${r.fullName ?? ""}</code><br><span class="muted">GitHub, installation ${r.installationId ?? ""}</span>`;

async function listPage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const base = repositoriesPath(c.get("org").id, current.id);
  const ctx = c.get("ctx");
  const repos = await allPages((cursor) =>
    listRepositories({ ctx, input: { environmentId: current.id, pageSize: 200, cursor } }),
  );
  const manage = mayManage(c);
  const install = manage ? githubInstallLink(c) : undefined;
  const rows = repos.map(
    (r) => html`<tr>
    <td>${repositoryLocation(r)}</td>
    <td>${join(r.services.map((s) => html`<code>${s}</code> `))}</td>
    <td><code>${r.defaultBranch}</code></td>
    <td><code>${r.testCommand}</code></td>
    <td>${formatTime(r.createdAt)}</td>
    ${when(manage, () => html`<td><a href="${base}/${r.id}/delete">Delete…</a></td>`)}
  </tr>`,
  );
  return renderPage(c, {
    title: "Repositories",
    section: "repositories",
    lead: `Where the code of ${current.name}'s services lives. A remediation run fixes a problem in the repository registered for its service.`,
    body: html`${notice(done[c.req.query("done") ?? ""])}
${when(manage, () => html`<p class="actions"><a class="button" href="${base}/new">Register a repository</a>${when(install, () => html` <a class="button secondary" href="${install ?? ""}">Install the GitHub App</a>`)}</p>`)}
${dataTable({
  caption: `Repositories in ${current.name}`,
  headers: [
    "Repository",
    "Services",
    "Default branch",
    "Test command",
    "Registered",
    ...(manage ? [hiddenText("Actions")] : []),
  ],
  rows,
  empty: html`<div class="card"><p>No repository is registered in this environment yet. Register the repository of a
  service (a local git work tree on this server, or a GitHub repository through the GitHub App) so patchbay's agent
  can propose fixes for its problems.</p></div>`,
})}
<p class="muted">Registrations cannot be edited: delete one and register it again. Agents never register repositories.</p>`,
  });
}

/** Deletion asks first (GET), then removes with a CSRF-checked POST. */
async function deletePage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const ctx = c.get("ctx");
  // A member gets the 403 page here rather than a confirmation that could only fail.
  requirePermission(ctx, "repositories:manage");
  requireOwnerOrAdmin(ctx);
  const repositoryId = c.req.param("repositoryId") ?? "";
  const repo = await getRepository({ ctx, input: { environmentId: current.id, repositoryId } });
  const base = repositoriesPath(c.get("org").id, current.id);
  return confirmPage(c, {
    title: "Delete this registration?",
    section: "repositories",
    text: html`<p>${repositoryLocation(repo)}</p>
  <p>Problems of ${join(repo.services.map((s) => html`<code>${s}</code> `))} can no longer be remediated until a
  repository is registered for them again. Runs in review keep their branch; patchbay's branches stay in the
  repository. A run still working on it must be cancelled or finish first.</p>`,
    action: `${base}/${repo.id}/delete`,
    label: "Confirm deletion",
    button: html`<button type="submit" class="danger">Delete registration</button>`,
    cancel: base,
  });
}

export function registerRepositoryPages(web: Hono<WebEnv>): void {
  const path = "/orgs/:orgId/environments/:environmentId/repositories";
  web.get(path, listPage);
  web.get(`${path}/:repositoryId/delete`, deletePage);
  web.post(`${path}/:repositoryId/delete`, async (c) => {
    const environmentId = c.get("environment").current.id;
    const repositoryId = c.req.param("repositoryId") ?? "";
    await deleteRepository({ ctx: c.get("ctx"), input: { environmentId, repositoryId } });
    return c.redirect(`${repositoriesPath(c.get("org").id, environmentId)}?done=deleted`, 303);
  });
}
