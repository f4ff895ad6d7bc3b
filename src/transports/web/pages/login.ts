import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { signIn } from "../../../features/web-sessions/sign-in.ts";
import { clientAddress } from "../client-address.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FieldErrors,
  formString,
  inputField,
  notice,
  postForm,
  readForm,
} from "../forms.ts";
import { html } from "../html.ts";
import { renderPage } from "../layout.ts";
import { currentWebUser, setSessionCookie } from "../session.ts";

/**
 * Only a path on this site: `/x`, never `//evil.example` or `/\evil.example` (which browsers
 * read as another host), so the sign-in form cannot be used as an open redirect.
 */
export function safeNext(next: string | undefined): string {
  if (!next?.startsWith("/") || next.startsWith("//") || /[\\\r\n\t]/.test(next)) return "/";
  return next;
}

const reasons: Record<string, string> = {
  expired: "Your session has ended. Sign in again to continue.",
  signed_out: "You have signed out.",
};

function loginPage(
  c: Context<WebEnv>,
  state: {
    email?: string;
    next: string;
    error?: string;
    fields?: FieldErrors;
    info?: string;
    status?: 401 | 429 | 400 | 403;
  },
) {
  return renderPage(c, {
    title: "Sign in",
    status: state.status ?? 200,
    body: html`<div class="narrow">
  ${notice(state.info, "info")}
  ${errorSummary(state.error, state.fields)}
  <div class="card">
    ${postForm(c, {
      action: "/login",
      busy: "Signing in…",
      body: html`<input type="hidden" name="next" value="${state.next}">
      ${inputField({ name: "email", label: "Email", type: "email", value: state.email ?? "", autocomplete: "username", required: true, autofocus: !state.email, error: state.fields?.email })}
      ${inputField({ name: "password", label: "Password", type: "password", autocomplete: "current-password", required: true, autofocus: Boolean(state.email), error: state.fields?.password })}
      <div class="actions"><button type="submit">Sign in</button></div>`,
    })}
  </div>
  <p class="muted">New here? Ask an owner of your organisation for an invitation link.</p>
</div>`,
  });
}

export function registerLoginPages(web: Hono<WebEnv>): void {
  web.get("/login", (c) => {
    const next = safeNext(c.req.query("next"));
    if (currentWebUser(c)) return c.redirect(next, 303);
    const reason = c.req.query("reason");
    return loginPage(c, { next, info: reason ? reasons[reason] : undefined });
  });

  web.post("/login", async (c) => {
    const form = await readForm(c);
    const email = formString(form, "email").trim();
    const password = formString(form, "password");
    const next = safeNext(formString(form, "next"));
    if (!email || !password) {
      const fields: FieldErrors = {};
      if (!email) fields.email = "Enter your email address.";
      if (!password) fields.password = "Enter your password.";
      return loginPage(c, { email, next, fields, status: 400, error: "Enter your email and password." });
    }
    const deps = c.get("deps");
    try {
      const session = await signIn({
        deps,
        input: {
          email,
          password,
          clientAddress: clientAddress(c, deps.config.trustedProxies),
          replacing: c.get("webSecret"),
        },
      });
      setSessionCookie(c, session, deps.clock());
      return c.redirect(next, 303);
    } catch (error) {
      if (!isAppError(error) || (error.code !== "unauthorized" && error.code !== "rate_limited")) throw error;
      if (error.code === "rate_limited")
        c.header("retry-after", String(error.details?.retryAfterSeconds ?? 900));
      return loginPage(c, {
        email,
        next,
        error: error.message,
        status: error.code === "rate_limited" ? 429 : 401,
      });
    }
  });
}
