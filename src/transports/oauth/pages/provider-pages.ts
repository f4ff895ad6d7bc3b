import type { Context } from "hono";
import type { ErrorOut, KoaContextWithOIDC, OidcClient } from "oidc-provider";
import { CLI_CLIENT_ID } from "../../../features/oauth/cli-client.ts";
import { csrfToken } from "../../web/csrf.ts";
import type { WebEnv } from "../../web/env.ts";
import { csrfField, notice } from "../../web/forms.ts";
import { type Html, html, raw, when } from "../../web/html.ts";
import { type PageOptions, renderPage } from "../../web/layout.ts";
import { contentSecurityPolicy } from "../../web/security-headers.ts";

/** The Hono context of the request the provider is serving, attached by the bridge. */
export const HONO_CONTEXT = Symbol("patchbay.oauth.honoContext");

/** The pages oidc-provider renders itself (device flow, errors), drawn with the UI's layout. */
export type OAuthPages = {
  userCodeInput(
    ctx: KoaContextWithOIDC,
    form: string,
    out?: ErrorOut,
    err?: Error & { userCode?: string },
  ): Promise<void>;
  userCodeConfirm(
    ctx: KoaContextWithOIDC,
    form: string,
    client: OidcClient,
    deviceInfo: { ip?: string; ua?: string },
    userCode: string,
  ): Promise<void>;
  deviceSuccess(ctx: KoaContextWithOIDC): Promise<void>;
  renderError(ctx: KoaContextWithOIDC, out: ErrorOut, error: Error): Promise<void>;
};

function honoContext(ctx: KoaContextWithOIDC): Context<WebEnv> {
  const c = (ctx.req as unknown as Record<symbol, unknown>)[HONO_CONTEXT];
  if (!c) throw new Error("OAuth page rendered outside the Hono bridge");
  return c as Context<WebEnv>;
}

async function render(ctx: KoaContextWithOIDC, options: PageOptions): Promise<void> {
  const page = await renderPage(honoContext(ctx), options);
  ctx.status = page.status;
  ctx.type = "html";
  ctx.body = await page.text();
}

/** How the consent and confirm pages name a client: a dynamically registered name is its own claim. */
export function clientLabel(client: OidcClient | undefined, clientId: string): Html {
  if (clientId === CLI_CLIENT_ID)
    return html`<strong>patchbay CLI</strong> <span class="muted">(built in)</span>`;
  const name = client?.clientName;
  return name
    ? html`<strong>${name}</strong> <span class="muted">(a name the application gave itself; client ${clientId})</span>`
    : html`<strong>${clientId}</strong> <span class="muted">(an application that gave no name)</span>`;
}

/** The xsrf value of the provider's device form, so the page can draw its own labelled form. */
const xsrfOf = (form: string): string | undefined => /name="xsrf" value="([0-9a-f]{16,128})"/.exec(form)?.[1];

const deviceFormAction = "/oauth/device";

/** The code from a verification link (`?user_code=`), when it looks like one. */
const prefilled = (c: Context<WebEnv>): string => {
  const code = c.req.query("user_code") ?? "";
  return /^[A-Za-z0-9 -]{1,32}$/.test(code) ? code : "";
};

export const oauthPages: OAuthPages = {
  async userCodeInput(ctx, form, _out, err) {
    const c = honoContext(ctx);
    const xsrf = xsrfOf(form);
    const message = !err
      ? undefined
      : err.userCode || err.name === "NoCodeError"
        ? "That code is not right, or it has expired. Check the code your device shows and try again."
        : err.name === "AbortedError"
          ? "The request was cancelled. Start again on your device."
          : "The request could not be completed. Start again on your device.";
    await render(ctx, {
      title: "Connect a device",
      status: err ? 400 : 200,
      lead: "Enter the code your device (for example patchbay login in a terminal) shows.",
      body: html`<div class="narrow">
  ${when(message, () => html`<div class="alert error" role="alert">${message}</div>`)}
  <div class="card">
    ${
      xsrf
        ? html`<form method="post" action="${deviceFormAction}" novalidate>
      ${csrfField(c)}<input type="hidden" name="xsrf" value="${xsrf}">
      <div class="field"><label for="f-user_code">Code</label>
      <input id="f-user_code" name="user_code" type="text" value="${prefilled(c)}" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus></div>
      <div class="actions"><button type="submit">Continue</button></div>
    </form>`
        : html`${raw(form)}<input type="hidden" name="_csrf" value="${csrfToken(c)}" form="op.deviceInputForm">
      <div class="actions"><button type="submit" form="op.deviceInputForm">Continue</button></div>`
    }
  </div>
</div>`,
    });
  },

  async userCodeConfirm(ctx, form, client, deviceInfo, userCode) {
    const c = honoContext(ctx);
    await render(ctx, {
      title: "Confirm the device",
      body: html`<div class="narrow">
  ${notice("Continue only if you started this yourself and your device shows exactly this code.", "warning")}
  <div class="card">
    <dl class="facts">
      <dt>Code</dt><dd><code>${userCode}</code></dd>
      <dt>Application</dt><dd>${clientLabel(client, client.clientId)}</dd>
      ${when(deviceInfo.ip, () => html`<dt>Requested from</dt><dd>${deviceInfo.ip}</dd>`)}
      ${when(deviceInfo.ua, () => html`<dt>Client software</dt><dd>${deviceInfo.ua}</dd>`)}
    </dl>
    ${raw(form)}
    <input type="hidden" name="_csrf" value="${csrfToken(c)}" form="op.deviceConfirmForm">
    <div class="actions">
      <button type="submit" form="op.deviceConfirmForm">Continue</button>
      <button type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="secondary">Cancel</button>
    </div>
  </div>
</div>`,
    });
  },

  async deviceSuccess(ctx) {
    await render(ctx, {
      title: "Device connected",
      body: html`<div class="narrow"><div class="card">
  <p>${clientLabel(ctx.oidc.client, ctx.oidc.client?.clientId ?? "")} is signed in. You can close this page and return to your device.</p>
</div></div>`,
    });
  },

  async renderError(ctx, out) {
    await render(ctx, {
      title: "That sign-in request did not work",
      status: ctx.status >= 400 ? (ctx.status as 400) : 400,
      body: html`<div class="card">
  <p>${out.error_description ?? out.error}</p>
  <p class="muted">Error <code>${out.error}</code>. Start again from the application that sent you here.</p>
  <p><a href="/">Go to your organisations</a></p>
</div>`,
    });
  },
};

/**
 * The UI's security headers on every provider response, set before it renders (its form_post
 * pages add their script's hash to the CSP). Authorization responses may post to the client's
 * redirect URI, so there `form-action` is left out.
 */
export async function providerSecurityHeaders(
  ctx: KoaContextWithOIDC,
  next: () => Promise<void>,
): Promise<void> {
  const toClient = ctx.path.startsWith("/oauth/authorize");
  ctx.set("content-security-policy", contentSecurityPolicy({ formAction: toClient ? null : ["'self'"] }));
  ctx.set("x-frame-options", "DENY");
  ctx.set("referrer-policy", "no-referrer");
  ctx.set("x-content-type-options", "nosniff");
  await next();
}
