import type { Hono } from "hono";
import { AppError } from "../../../errors.ts";
import {
  completeCredentialUpload,
  openCredentialUpload,
} from "../../../features/credential-uploads/complete-credential-upload.ts";
import type { WebEnv } from "../env.ts";
import { formString, inputField, notice, postForm, readForm } from "../forms.ts";
import { html } from "../html.ts";
import { renderPage } from "../layout.ts";

/**
 * The credential-upload action an MCP client prepared (prepare_mcp_connection_credential_upload):
 * the signed-in owner it was made for types the credential here, into a masked field; it is
 * checked against the remote server and sealed in the vault exactly as the REST credential set
 * does, and never shown again. The MCP client learns the outcome by polling the tool.
 */
export function registerCredentialUploadPages(web: Hono<WebEnv>): void {
  web.get("/credential-uploads", async (c) => {
    const user = c.get("webUser");
    if (!user) throw new AppError("unauthorized", "Sign in first.");
    const token = c.req.query("token") ?? "";
    const ctx = { deps: c.get("deps"), actor: user, channel: "web" as const, requestId: c.get("requestId") };
    const { row, connection } = await openCredentialUpload({ ctx, input: { token } });
    const kind =
      connection.authKind === "api_key"
        ? `API key (sent as ${connection.headerName ?? "a header"})`
        : "Bearer token";
    return renderPage(c, {
      title: `Set the credential of ${connection.displayName}`,
      lead: "Your MCP client asked you to enter this credential here, so that it never passes through the client.",
      body: html`<div class="narrow card">
  <dl>
    <dt>Connection</dt><dd>${connection.alias} <code>${row.connectionId}</code> (revision ${row.revision})</dd>
    <dt>Credential</dt><dd>${kind}</dd>
    <dt>Link expires</dt><dd>${row.expiresAt.toISOString()}</dd>
  </dl>
  ${postForm(c, {
    action: "/credential-uploads",
    busy: "Checking with the server…",
    body: html`<input type="hidden" name="token" value="${token}">
    ${inputField({
      name: "credential",
      label: "Credential",
      type: "password",
      autocomplete: "off",
      required: true,
      hint: "Checked against the server before it replaces any current credential; stored encrypted and never shown again.",
    })}
    <div class="actions"><button type="submit">Set credential</button></div>`,
  })}
</div>`,
    });
  });

  web.post("/credential-uploads", async (c) => {
    const user = c.get("webUser");
    if (!user) throw new AppError("unauthorized", "Sign in first.");
    const form = await readForm(c);
    const value = formString(form, "credential");
    if (value.length === 0 || value.length > 8_192) {
      throw new AppError("invalid_request", "Enter the credential (at most 8,192 characters).");
    }
    const done = await completeCredentialUpload({
      ctx: { deps: c.get("deps"), actor: user, channel: "web" as const, requestId: c.get("requestId") },
      input: { token: formString(form, "token"), value },
    });
    return renderPage(c, {
      title: "Credential set",
      body: html`<div class="narrow card">
  ${notice("The credential is stored. Your MCP client sees the upload as completed when it next polls.", "success")}
  <p><a href="/orgs/${done.organizationId}">Back to your organisation</a></p>
</div>`,
    });
  });
}
