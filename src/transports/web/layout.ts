import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { listMyOrganizations, type WebOrganization } from "../../features/web-sessions/web-actor.ts";
import { assetPath } from "./assets.ts";
import type { WebEnv } from "./env.ts";
import { postForm } from "./forms.ts";
import { type Html, html, join, nothing, when } from "./html.ts";

/** The environment's pages, by the path segment after `/environments/:environmentId/`. */
const environmentSectionNames = {
  connections: "Connections",
  services: "Services",
  logs: "Logs",
  problems: "Problems",
  remediations: "Remediations",
  repositories: "Repositories",
  "telemetry-keys": "Telemetry keys",
} as const;
export type EnvironmentSection = keyof typeof environmentSectionNames;
export const environmentSections = Object.keys(environmentSectionNames) as EnvironmentSection[];
const sectionNames = {
  ...environmentSectionNames,
  "api-keys": "API keys",
  members: "Members",
  webhooks: "Webhooks",
  audit: "Audit log",
} as const;
type Section = keyof typeof sectionNames;

export type PageOptions = {
  title: string;
  /** The page's content, inside <main> after its <h1> (unless `heading` is false). */
  body: Html;
  status?: ContentfulStatusCode;
  /** Highlights the organisation's navigation entry. */
  section?: Section;
  /** Set false when the body brings its own <h1>. */
  heading?: boolean;
  /** A line under the heading. */
  lead?: Html | string;
  /** Reloads the page after this many seconds (a run in progress); a meta refresh, no script. */
  refreshSeconds?: number | undefined;
};

export const roleNames = { owner: "Owner", admin: "Admin", member: "Member" } as const;

/** Links in the header's switchers are plain links in a disclosure: no script needed. */
function switcher(
  label: string,
  current: string,
  items: readonly { href: string; text: string; current: boolean }[],
) {
  return html`<details class="switcher">
  <summary><span class="switcher-label">${label}</span> ${current}</summary>
  <ul>${join(
    items.map(
      (i) =>
        html`<li><a href="${i.href}"${i.current ? html` aria-current="true"` : nothing}>${i.text}</a></li>`,
    ),
  )}</ul>
</details>`;
}

async function header(c: Context<WebEnv>, opts: PageOptions): Promise<Html> {
  const user = c.get("webUser");
  const environment = c.get("environment");
  if (!user) return html`<header class="top"><a class="brand" href="/">patchbay</a></header>`;
  const org: WebOrganization | undefined = c.get("org");
  const orgs = await listMyOrganizations({ db: c.get("deps").db, input: { userId: user.userId } });
  const base = org ? `/orgs/${org.id}` : "";
  // Environment pages link into the current environment; on organisation pages (no environment
  // in context) they go through /orgs/:orgId, which picks the first environment.
  const environmentHref = (section: EnvironmentSection) =>
    environment ? `${base}/environments/${environment.current.id}/${section}` : `${base}?to=${section}`;
  const links: { section: Section; href: string }[] = org
    ? [
        ...environmentSections.map((section) => ({ section, href: environmentHref(section) })),
        { section: "api-keys" as const, href: `${base}/api-keys` },
        { section: "members" as const, href: `${base}/members` },
        { section: "webhooks" as const, href: `${base}/webhooks` },
        // The trail is for owners and admins (the verb refuses members).
        ...(org.role === "member" ? [] : [{ section: "audit" as const, href: `${base}/audit` }]),
      ]
    : [];
  // Switching environments keeps the section (a trace or problem belongs to one environment, so
  // their pages switch to the list they belong to).
  const switchTo = environmentSections.find((s) => s === opts.section) ?? "connections";
  return html`<header class="top">
  <a class="brand" href="/">patchbay</a>
  ${when(org, () =>
    switcher(
      "Organisation",
      org?.name ?? "",
      orgs.map((o) => ({
        href: `/orgs/${o.id}`,
        text: `${o.name} (${roleNames[o.role]})`,
        current: o.id === org?.id,
      })),
    ),
  )}
  ${when(environment, () =>
    switcher(
      "Environment",
      environment?.current.name ?? "",
      (environment?.all ?? []).map((e) => ({
        href: `${base}/environments/${e.id}/${switchTo}`,
        text: e.name,
        current: e.id === environment?.current.id,
      })),
    ),
  )}
  ${when(
    links.length > 0,
    () =>
      html`<nav aria-label="Organisation"><ul>${join(
        links.map(
          (l) =>
            html`<li><a href="${l.href}"${l.section === opts.section ? html` aria-current="page"` : nothing}>${sectionNames[l.section]}</a></li>`,
        ),
      )}</ul></nav>`,
  )}
  <div class="account">
    <span class="who">${user.email}${when(org, () => html` · ${roleNames[org?.role ?? "member"]}`)}</span>
    ${postForm(c, { action: "/logout", body: html`<button type="submit" class="link">Sign out</button>`, label: "Sign out" })}
  </div>
</header>`;
}

/**
 * Asks before something that cannot be undone: what it does, the button that does it (a
 * CSRF-checked POST) and the way back.
 */
export function confirmPage(
  c: Context<WebEnv>,
  o: Pick<PageOptions, "title" | "section"> & {
    text: Html;
    action: string;
    button: Html;
    label?: string;
    cancel: string;
  },
): Promise<Response> {
  return renderPage(c, {
    title: o.title,
    section: o.section,
    body: html`<div class="card">
  ${o.text}
  <div class="actions">
    ${postForm(c, { action: o.action, label: o.label, body: o.button })}
    <a class="button secondary" href="${o.cancel}">Cancel</a>
  </div>
</div>`,
  });
}

/**
 * The one page shell: header with the organisation and environment switchers, navigation and
 * sign-out; the page in <main>. Pages (UI, OAuth consent, approval links, credential upload)
 * hand it their content and get a complete response back.
 */
export async function renderPage(c: Context<WebEnv>, opts: PageOptions): Promise<Response> {
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · patchbay</title>
${when(opts.refreshSeconds, () => html`<meta http-equiv="refresh" content="${opts.refreshSeconds}">`)}
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetPath("app.css")}">
<script src="${assetPath("app.js")}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${await header(c, opts)}
<main id="main">
${when(opts.heading !== false, () => html`<h1>${opts.title}</h1>`)}
${when(opts.lead, () => html`<p class="lead">${opts.lead}</p>`)}
${opts.body}
</main>
</body>
</html>`;
  return c.html(doc, opts.status ?? 200);
}
