import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { acceptInvitation } from "../../../features/members/accept-invitation.ts";
import { findInvitation, type OpenInvitation } from "../../../features/members/find-invitation.ts";
import { PASSWORD_MIN_LENGTH } from "../../../features/web-sessions/password.ts";
import { clientAddress } from "../client-address.ts";
import type { WebEnv } from "../env.ts";
import { errorPage } from "../error-page.ts";
import {
  errorSummary,
  type FieldErrors,
  fieldErrorsOf,
  formString,
  inputField,
  notice,
  postForm,
  readForm,
  refusalMessage,
} from "../forms.ts";
import { html, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { setSessionCookie } from "../session.ts";

const roleNames = { owner: "an owner", admin: "an administrator", member: "a member" } as const;

/** The link path; the token rides in the query, which the access log never records. */
export const invitationPath = (token: string): string =>
  `/invitations/accept?token=${encodeURIComponent(token)}`;

function invitationPage(
  c: Context<WebEnv>,
  invitation: OpenInvitation,
  token: string,
  state: { error?: string; fields?: FieldErrors; status?: 400 | 401 | 409 | 429 } = {},
) {
  const user = c.get("webUser");
  const existing = invitation.accountHasPassword;
  return renderPage(c, {
    title: `Join ${invitation.organizationName}`,
    status: state.status ?? 200,
    lead: `You are invited to join as ${roleNames[invitation.role]}.`,
    body: html`<div class="narrow">
  ${when(user && user.email !== invitation.email, () =>
    notice(
      `You are signed in as ${user?.email}. Accepting signs you in as ${invitation.email} instead.`,
      "warning",
    ),
  )}
  ${errorSummary(state.error, state.fields)}
  <div class="card">
    ${postForm(c, {
      action: "/invitations/accept",
      busy: "Joining…",
      body: html`<input type="hidden" name="token" value="${token}">
      ${inputField({ name: "email", label: "Account", type: "email", value: invitation.email, readonly: true, autocomplete: "username" })}
      ${
        existing
          ? inputField({
              name: "password",
              label: "Your patchbay password",
              type: "password",
              autocomplete: "current-password",
              hint: "This address already has an account: confirm it is you.",
              error: state.fields?.password,
              required: true,
            })
          : html`${inputField({
              name: "password",
              label: "Choose a password",
              type: "password",
              autocomplete: "new-password",
              hint: `At least ${PASSWORD_MIN_LENGTH} characters.`,
              error: state.fields?.password,
              required: true,
            })}${inputField({
              name: "confirm",
              label: "Repeat the password",
              type: "password",
              autocomplete: "new-password",
              error: state.fields?.confirm,
              required: true,
            })}`
      }
      <div class="actions"><button type="submit">Join ${invitation.organizationName}</button></div>`,
    })}
  </div>
  <p class="muted">This link works once and expires on ${invitation.expiresAt.toISOString().slice(0, 10)}.</p>
</div>`,
  });
}

export function registerInvitationPages(web: Hono<WebEnv>): void {
  web.get("/invitations/accept", async (c) => {
    const token = c.req.query("token") ?? "";
    const deps = c.get("deps");
    const invitation = await findInvitation({ db: deps.db, now: deps.clock(), input: { token } });
    return invitationPage(c, invitation, token);
  });

  web.post("/invitations/accept", async (c) => {
    const form = await readForm(c);
    const token = formString(form, "token");
    const password = formString(form, "password");
    const deps = c.get("deps");
    const invitation = await findInvitation({ db: deps.db, now: deps.clock(), input: { token } });
    if (!invitation.accountHasPassword && password !== formString(form, "confirm")) {
      return invitationPage(c, invitation, token, {
        status: 400,
        fields: { confirm: "The two passwords differ." },
      });
    }
    try {
      const joined = await acceptInvitation({
        deps,
        input: {
          token,
          password,
          clientAddress: clientAddress(c, deps.config.trustedProxies),
          replacing: c.get("webSecret"),
        },
      });
      setSessionCookie(c, joined, deps.clock());
      return c.redirect(`/orgs/${joined.organizationId}`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      if (error.code === "invitation_invalid") return errorPage(c, error);
      if (!["invalid_request", "unauthorized", "rate_limited"].includes(error.code)) throw error;
      return invitationPage(c, invitation, token, {
        status: error.status as 400 | 401 | 429,
        error: refusalMessage(error),
        fields: fieldErrorsOf(error),
      });
    }
  });
}
