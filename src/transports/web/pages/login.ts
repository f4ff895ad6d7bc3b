import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { signIn } from "../../../features/web-sessions/sign-in.ts";
import { signOut } from "../../../features/web-sessions/sign-out.ts";
import { clientAddress } from "../client-address.ts";
import { verifyCsrf } from "../csrf.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FieldErrors,
  type FormState,
  formString,
  inputField,
  notice,
  postForm,
  readForm,
} from "../forms.ts";
import { html } from "../html.ts";
import { renderPage } from "../layout.ts";
import { clearCookie, currentWebUser, loginUrl, setSessionCookie } from "../session.ts";

/**
 * Only a path on this site: `/x`, never `//evil.example` or `/\evil.example` (which browsers
 * read as another host), so the sign-in form cannot be used as an open redirect.
 */
function safeNext(next: string | undefined): string {
  if (!next?.startsWith("/") || next.startsWith("//") || /[\\\r\n\t]/.test(next)) return "/";
  return next;
}

const reasons: Record<string, string> = {
  expired: "Your session has ended. Sign in again to continue.",
  signed_out: "You have signed out.",
};

function loginPage(c: Context<WebEnv>, state: FormState & { email?: string; next: string; info?: string }) {
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

/**
 * Sign-in, and sign-out: POST only, with the CSRF check, so a link or an image cannot sign anyone
 * out. A session that already ended has nothing to revoke, so that case skips the check and just
 * lands on /login.
 */
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
      return loginPage(c, { email, next, error: error.message, status: error.status as 401 | 429 });
    }
  });

  web.post(
    "/logout",
    async (c, next) => (c.get("webSecret") ? next() : c.redirect(loginUrl(undefined, "expired"), 303)),
    verifyCsrf(),
    async (c) => {
      const secret = c.get("webSecret");
      if (secret) await signOut({ deps: c.get("deps"), input: { secret } });
      clearCookie(c, "session");
      return c.redirect(loginUrl(undefined, "signed_out"), 303);
    },
  );
}
