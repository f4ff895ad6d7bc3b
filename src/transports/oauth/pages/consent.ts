import type { Context, Hono } from "hono";
import type Provider from "oidc-provider";
import type { Interaction, InteractionResults } from "oidc-provider";
import { AppError } from "../../../errors.ts";
import {
  type AuthorizationRequest,
  approveAuthorization,
} from "../../../features/oauth/approve-authorization.ts";
import { listMyOrganizations } from "../../../features/web-sessions/web-actor.ts";
import { resourceNamed, scopeDescriptions } from "../../../oauth-resources.ts";
import type { WebEnv } from "../../web/env.ts";
import { errorSummary, formString, notice, postForm, readForm, selectField } from "../../web/forms.ts";
import { type Html, html, join, when } from "../../web/html.ts";
import { renderPage } from "../../web/layout.ts";
import { contentSecurityPolicy } from "../../web/security-headers.ts";
import { currentWebUser, loginUrl, type WebUser } from "../../web/session.ts";
import { interactionPath } from "../endpoints.ts";
import { MemoryResponse, nodeRequest } from "../node-bridge.ts";
import { clientLabel } from "./provider-pages.ts";

const roleNames = { owner: "Owner", admin: "Admin", member: "Member" } as const;

/** The provider reads its interaction cookie from a Node request; this one carries the page's cookies. */
const cookieRequest = (c: Context<WebEnv>) =>
  nodeRequest({ method: c.req.method, url: new URL(c.req.url).pathname, headers: c.req.raw.headers });

/** Answers the interaction and sends the browser on (the provider's resume URL). */
async function finish(
  c: Context<WebEnv>,
  provider: Provider,
  result: InteractionResults,
  options?: { mergeWithLastSubmission: boolean },
): Promise<Response> {
  return c.redirect(
    await provider.interactionResult(cookieRequest(c), new MemoryResponse(), result, options),
    303,
  );
}

/** The interaction this browser is in, which must be the one the URL names. */
async function loadInteraction(c: Context<WebEnv>, provider: Provider, uid: string): Promise<Interaction> {
  let interaction: Interaction;
  try {
    interaction = await provider.interactionDetails(cookieRequest(c), new MemoryResponse());
  } catch {
    throw new AppError(
      "authorization_expired",
      "This sign-in request has expired or was opened in another browser. Start again from your application.",
    );
  }
  if (interaction.uid !== uid) {
    throw new AppError(
      "authorization_expired",
      "This page belongs to another sign-in request. Start again from your application.",
    );
  }
  return interaction;
}

/** The scopes the consent prompt says are missing: everything asked for, since grants are never reused. */
function requestOf(interaction: Interaction): AuthorizationRequest {
  const { missingOIDCScope, missingResourceScopes } = interaction.prompt.details;
  const resourceScopes: Record<string, string[]> = {};
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
    if (Array.isArray(scopes)) resourceScopes[indicator] = scopes.map(String);
  }
  return {
    clientId: String(interaction.params.client_id ?? ""),
    oidcScopes: Array.isArray(missingOIDCScope) ? missingOIDCScope.map(String) : [],
    resourceScopes,
  };
}

/** Where the browser goes after the form: our resume URL, then the client's redirect URI. */
function redirectSource(interaction: Interaction): string | undefined {
  const uri = interaction.params.redirect_uri;
  const url = typeof uri === "string" ? URL.parse(uri) : null;
  if (!url) return undefined;
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

function scopeList(scopes: readonly string[]): Html {
  return html`<ul>${join(
    scopes.map((s) => html`<li><code>${s}</code> — ${scopeDescriptions[s] ?? "(no description)"}</li>`),
  )}</ul>`;
}

async function consentPage(
  c: Context<WebEnv>,
  provider: Provider,
  interaction: Interaction,
  user: WebUser,
  state: { error?: string; organizationId?: string; status?: 400 | 404 } = {},
): Promise<Response> {
  const request = requestOf(interaction);
  const client = await provider.Client.find(request.clientId);
  const base = c.get("deps").config.baseUrl;
  const orgs = await listMyOrganizations({ db: c.get("deps").db, input: { userId: user.userId } });
  const target = redirectSource(interaction);
  c.header(
    "content-security-policy",
    contentSecurityPolicy({ formAction: ["'self'", ...(target ? [target] : [])] }),
  );
  const resources = Object.entries(request.resourceScopes).filter(([, scopes]) => scopes.length > 0);
  const redirectUri =
    typeof interaction.params.redirect_uri === "string" ? interaction.params.redirect_uri : undefined;
  return renderPage(c, {
    title: "Allow access?",
    status: state.status ?? 200,
    body: html`<div class="narrow">
  ${errorSummary(state.error)}
  <div class="card">
    <p>${clientLabel(client, request.clientId)} asks to act as <strong>${user.email}</strong>.</p>
    ${when(redirectUri, () => html`<p class="muted">After you answer, your browser goes to <code>${redirectUri}</code>.</p>`)}
    ${join(
      resources.map(([indicator, scopes]) => {
        const name = resourceNamed(base, indicator);
        const label = name === "mcp" ? "the MCP server" : name === "api" ? "the REST API" : indicator;
        return html`<h2>On ${label} (<code>${indicator}</code>)</h2>${scopeList(scopes)}`;
      }),
    )}
    ${when(request.oidcScopes.length > 0, () => html`<h2>Also</h2>${scopeList(request.oidcScopes)}`)}
    ${
      orgs.length === 0
        ? notice("You belong to no organisation, so there is nothing to grant access to.", "warning")
        : // No data-busy: the UI script disables the buttons on submit, and a disabled submit
          // button's name/value (the decision) would not be sent.
          postForm(c, {
            action: interactionPath(interaction.uid),
            body: html`${
              orgs.length === 1
                ? html`<p>For the organisation <strong>${orgs[0]?.name}</strong> (your role: ${roleNames[orgs[0]?.role ?? "member"]}).</p>
                <input type="hidden" name="organization" value="${orgs[0]?.id}">`
                : selectField({
                    name: "organization",
                    label: "For the organisation",
                    options: orgs.map((o) => ({ value: o.id, label: `${o.name} (${roleNames[o.role]})` })),
                    value: state.organizationId,
                    hint: "The access works only in this organisation, and only while you are a member of it.",
                  })
            }
            ${when(
              orgs.some((o) => o.role === "member"),
              () =>
                html`<p class="hint">Managing MCP connections needs the owner or admin role in the organisation, whatever is granted here.</p>`,
            )}
            <div class="actions">
              <button type="submit" name="decision" value="allow">Allow</button>
              <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
            </div>`,
          })
    }
  </div>
</div>`,
  });
}

/**
 * `/oauth/interaction/:uid`: where the provider sends the browser when it needs the person.
 * Sign-in is the web UI's own (`/login?next=…`); the login prompt is answered with whoever is
 * signed in, and the consent prompt shows what the client asks for and which organisation it
 * will act for. Approving records the grant bound to that organisation.
 */
export function registerConsentPages(web: Hono<WebEnv>, loadProvider: () => Promise<Provider>): void {
  web.get("/oauth/interaction/:uid", async (c) => {
    const uid = c.req.param("uid");
    const user = currentWebUser(c);
    if (!user)
      return c.redirect(
        loginUrl(interactionPath(uid), c.get("webSessionEnded") ? "expired" : undefined),
        303,
      );
    const provider = await loadProvider();
    const interaction = await loadInteraction(c, provider, uid);
    if (interaction.prompt.name === "login") {
      return finish(c, provider, { login: { accountId: user.userId, remember: false } });
    }
    if (interaction.prompt.name !== "consent") {
      throw new AppError("invalid_request", "This sign-in request needs a step patchbay does not offer.");
    }
    assertSamePerson(interaction, user);
    return consentPage(c, provider, interaction, user);
  });

  web.post("/oauth/interaction/:uid", async (c) => {
    const uid = c.req.param("uid");
    const user = currentWebUser(c);
    if (!user) throw new AppError("unauthorized", "Sign in first.");
    const provider = await loadProvider();
    const interaction = await loadInteraction(c, provider, uid);
    if (interaction.prompt.name !== "consent") {
      throw new AppError("invalid_request", "This sign-in request is not waiting for an answer.");
    }
    assertSamePerson(interaction, user);
    const form = await readForm(c);
    const decision = formString(form, "decision");
    if (decision !== "allow" && decision !== "deny") {
      return consentPage(c, provider, interaction, user, { error: "Choose Allow or Deny.", status: 400 });
    }
    if (decision === "deny") {
      const result = { error: "access_denied", error_description: "The person refused access." };
      return finish(c, provider, result, { mergeWithLastSubmission: false });
    }
    const organizationId = formString(form, "organization");
    try {
      const { grantId } = await approveAuthorization({
        deps: c.get("deps"),
        provider,
        requestId: c.get("requestId"),
        input: { user, organizationId, request: requestOf(interaction) },
      });
      return await finish(c, provider, { consent: { grantId } });
    } catch (error) {
      if (error instanceof AppError && error.code === "not_found") {
        return consentPage(c, provider, interaction, user, {
          error: "Choose one of your organisations.",
          status: 404,
        });
      }
      throw error;
    }
  });
}

/** The provider's session (signed in moments ago) must be the person answering now. */
function assertSamePerson(interaction: Interaction, user: WebUser): void {
  if (interaction.session?.accountId !== user.userId) {
    throw new AppError(
      "authorization_expired",
      "You signed in as someone else since this request started. Start again from your application.",
    );
  }
}
