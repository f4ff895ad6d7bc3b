import type { Context, Hono } from "hono";
import { requireOwnerOrAdmin } from "../../../context.ts";
import { isAppError } from "../../../errors.ts";
import { createConnection } from "../../../features/connections/create-connection.ts";
import { type AuthInputValue, CreateConnectionBody } from "../../../features/connections/schemas.ts";
import { validateEndpointUrl } from "../../../platform/egress/endpoint-url.ts";
import type { WebEnv } from "../env.ts";
import {
  checkAll,
  errorSummary,
  type FieldErrors,
  type FormState,
  formString,
  inputField,
  parseWith,
  postForm,
  readForm,
  refusalState,
  selectField,
} from "../forms.ts";
import { type Html, html } from "../html.ts";
import { renderPage } from "../layout.ts";
import { authLabels, connectionsPath } from "./connection-view.ts";

/** What the create and update forms post: auth as two flat fields, as a form can carry them. */
export type ConnectionFormValues = {
  alias: string;
  displayName: string;
  endpointUrl: string;
  authKind: string;
  headerName: string;
};

export const readConnectionForm = (form: Record<string, unknown>): ConnectionFormValues => ({
  alias: formString(form, "alias").trim(),
  displayName: formString(form, "displayName"),
  endpointUrl: formString(form, "endpointUrl").trim(),
  authKind: formString(form, "authKind"),
  headerName: formString(form, "headerName").trim(),
});

/** The API's `auth` object from the flat fields (the schema then validates it). */
export function authFromForm(values: ConnectionFormValues): AuthInputValue | { kind: string } {
  return values.authKind === "api_key"
    ? { kind: "api_key", headerName: values.headerName }
    : { kind: values.authKind };
}

/**
 * The API's error paths and codes → this form's fields: `auth.headerName` is the header field,
 * a bad URL belongs to the endpoint, a taken alias to the alias.
 */
export function connectionFieldErrors(errors: FieldErrors): FieldErrors {
  const out: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    const field =
      path === "auth.headerName" ? "headerName" : path === "auth" || path === "auth.kind" ? "authKind" : path;
    out[field] ??= message;
  }
  return out;
}

/**
 * The endpoint URL's own rules (the verb checks them again), so a bad URL is flagged together
 * with the form's other errors instead of after they are fixed. Empty is the schema's to refuse.
 */
export function checkEndpoint(c: Context<WebEnv>, endpointUrl: string): void {
  if (endpointUrl) validateEndpointUrl(endpointUrl, c.get("deps").config.egress);
}

export const connectionCodeFields = {
  alias_taken: "alias",
  invalid_endpoint_url: "endpointUrl",
  egress_blocked: "endpointUrl",
};

const authOptions = (["none", "bearer", "api_key"] as const).map((k) => ({ value: k, label: authLabels[k] }));

/** The endpoint and authentication fields, shared by create and update. */
export function endpointFields(
  values: Partial<ConnectionFormValues>,
  fields: FieldErrors,
  opts: { endpointHint: string; endpointRequired: boolean },
): Html {
  return html`${inputField({
    name: "endpointUrl",
    label: "Endpoint URL",
    type: "url",
    value: values.endpointUrl ?? "",
    placeholder: "https://mcp.example.com/mcp",
    hint: opts.endpointHint,
    error: fields.endpointUrl,
    required: opts.endpointRequired,
    autocomplete: "off",
  })}
${selectField({
  name: "authKind",
  label: "Authentication",
  options: authOptions,
  value: values.authKind ?? "none",
  hint: "How patchbay authenticates to the server. The credential itself is set on the connection's page.",
  error: fields.authKind,
})}
${inputField({
  name: "headerName",
  label: "API-key header name",
  value: values.headerName ?? "",
  placeholder: "X-Api-Key",
  hint: "Only for API-key authentication: the header that carries the key.",
  error: fields.headerName,
  autocomplete: "off",
})}`;
}

function createPage(c: Context<WebEnv>, state: FormState & { values?: Partial<ConnectionFormValues> } = {}) {
  const { current } = c.get("environment");
  const base = connectionsPath(c.get("org").id, current.id);
  const fields = state.fields ?? {};
  const values = state.values ?? {};
  return renderPage(c, {
    title: "New connection",
    section: "connections",
    status: state.status ?? 200,
    lead: `A remote MCP server for ${current.name}. It starts disabled, with no credential and nothing approved.`,
    body: html`${errorSummary(state.error, fields)}
<div class="card">
${postForm(c, {
  action: `${base}/new`,
  body: html`${inputField({ name: "displayName", label: "Display name", value: values.displayName ?? "", error: fields.displayName, placeholder: "Runbooks", hint: "How people see it. Leave empty to use the alias." })}
  ${inputField({ name: "alias", label: "Alias", value: values.alias ?? "", error: fields.alias, required: true, placeholder: "runbooks", hint: "1–40 lowercase letters, digits, - or _. The agent sees tools as alias + tool name; it cannot be changed later.", autocomplete: "off" })}
  ${endpointFields(values, fields, { endpointHint: "Public HTTPS on port 443, without query, fragment or credentials.", endpointRequired: true })}
  <div class="actions"><button type="submit">Create connection</button> <a class="button secondary" href="${base}">Cancel</a></div>`,
})}
</div>`,
  });
}

export function registerConnectionCreatePages(web: Hono<WebEnv>): void {
  const path = "/orgs/:orgId/environments/:environmentId/connections/new";

  web.get(path, (c) => {
    // Members get the 403 page here rather than a form that could only fail.
    requireOwnerOrAdmin(c.get("ctx"), "mcp_connections:manage");
    return createPage(c);
  });

  web.post(path, async (c) => {
    const values = readConnectionForm(await readForm(c));
    const environmentId = c.get("environment").current.id;
    try {
      // As the CLI: the display name defaults to the alias. With no alias either, "-" keeps the
      // display name from repeating the alias's error.
      const displayName = values.displayName.trim() || values.alias || "-";
      const [body] = checkAll(
        [
          () =>
            parseWith(CreateConnectionBody, {
              alias: values.alias,
              displayName,
              endpointUrl: values.endpointUrl,
              auth: authFromForm(values),
            }),
          () => checkEndpoint(c, values.endpointUrl),
        ],
        connectionCodeFields,
      );
      const created = await createConnection({ ctx: c.get("ctx"), input: { environmentId, ...body } });
      return c.redirect(`${connectionsPath(c.get("org").id, environmentId)}/${created.id}?done=created`, 303);
    } catch (error) {
      if (!isAppError(error) || error.status >= 500 || error.code === "forbidden") throw error;
      const refusal = refusalState(error, connectionCodeFields);
      return createPage(c, { ...refusal, values, fields: connectionFieldErrors(refusal.fields) });
    }
  });
}
