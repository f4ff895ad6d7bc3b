import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { listMyOrganizations, type WebOrganization } from "../features/web-sessions/web-actor.ts";
import { assetPath } from "./assets.ts";
import type { WebEnv } from "./env.ts";
import { postForm } from "./forms.ts";
import { type Html, html, join, nothing, when } from "./html.ts";

export type Section = "connections" | "repositories" | "remediations" | "api-keys" | "members";

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

const roleNames = { owner: "Owner", admin: "Admin", member: "Member" } as const;

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
  const links: { section: Section; href: string; text: string }[] = org
    ? [
        {
          section: "connections",
          href: environment ? `${base}/environments/${environment.current.id}/connections` : base,
          text: "Connections",
        },
        ...environmentLinks(base, environment?.current.id),
        { section: "api-keys", href: `${base}/api-keys`, text: "API keys" },
        { section: "members", href: `${base}/members`, text: "Members" },
      ]
    : [];
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
        href: `${base}/environments/${e.id}/connections`,
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
            html`<li><a href="${l.href}"${l.section === opts.section ? html` aria-current="page"` : nothing}>${l.text}</a></li>`,
        ),
      )}</ul></nav>`,
  )}
  <div class="account">
    <span class="who">${user.email}${when(org, () => html` · ${roleNames[org?.role ?? "member"]}`)}</span>
    ${postForm(c, { action: "/logout", body: html`<button type="submit" class="link">Sign out</button>`, label: "Sign out" })}
  </div>
</header>`;
}

/** Remediation's pages of the current environment (none outside an environment). */
function environmentLinks(base: string, environmentId: string | undefined) {
  if (!environmentId) return [];
  const env = `${base}/environments/${environmentId}`;
  return [
    { section: "repositories" as const, href: `${env}/repositories`, text: "Repositories" },
    { section: "remediations" as const, href: `${env}/remediations`, text: "Remediations" },
  ];
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
