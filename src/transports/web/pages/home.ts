import type { Hono } from "hono";
import { listEnvironments } from "../../../features/environments/list-environments.ts";
import { listMyOrganizations } from "../../../features/web-sessions/web-actor.ts";
import type { WebEnv } from "../env.ts";
import { html } from "../html.ts";
import { type EnvironmentSection, environmentSections, renderPage } from "../layout.ts";
import { loginUrl } from "../session.ts";

/**
 * `/`: straight to the first organisation; `/orgs/:orgId`: straight to its first environment's
 * connections, or to the environment page `?to=` names (the navigation's links from organisation
 * pages, which have no environment in view).
 */
export function registerHomePages(web: Hono<WebEnv>): void {
  web.get("/", async (c) => {
    const user = c.get("webUser");
    if (!user) return c.redirect(loginUrl(undefined, c.get("webSessionEnded") ? "expired" : undefined), 303);
    const [first] = await listMyOrganizations({ db: c.get("deps").db, input: { userId: user.userId } });
    if (first) return c.redirect(`/orgs/${first.id}`, 303);
    return renderPage(c, {
      title: "No organisation yet",
      body: html`<div class="card"><p>You are signed in as ${user.email} but belong to no organisation.
        Ask an owner for an invitation link.</p></div>`,
    });
  });

  web.get("/orgs/:orgId", async (c) => {
    const org = c.get("org");
    const { items } = await listEnvironments({ ctx: c.get("ctx"), input: { pageSize: 1 } });
    const first = items[0];
    const to = c.req.query("to");
    const section: EnvironmentSection = environmentSections.find((s) => s === to) ?? "connections";
    if (first) return c.redirect(`/orgs/${org.id}/environments/${first.id}/${section}`, 303);
    return c.redirect(`/orgs/${org.id}/members`, 303);
  });
}
