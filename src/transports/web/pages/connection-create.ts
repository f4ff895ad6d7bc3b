import type { Context, Hono } from "hono";
import { requireOwnerOrAdmin } from "../../../context.ts";
import { isAppError } from "../../../errors.ts";
import { createConnection } from "../../../features/connections/create-connection.ts";
import { CreateConnectionBody } from "../../../features/connections/schemas.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FieldErrors,
  fieldErrorsOf,
  inputField,
  parseWith,
  postForm,
  readForm,
  refusalMessage,
} from "../forms.ts";
import { html } from "../html.ts";
import { renderPage } from "../layout.ts";
import {
  authFromForm,
  type ConnectionFormValues,
  connectionCodeFields,
  connectionFieldErrors,
  endpointFields,
  readConnectionForm,
} from "./connection-form.ts";
import { connectionsPath } from "./connection-view.ts";

function createPage(
  c: Context<WebEnv>,
  state: {
    values?: Partial<ConnectionFormValues>;
    fields?: FieldErrors;
    error?: string;
    status?: 400 | 409 | 422;
  } = {},
) {
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
  body: html`${inputField({ name: "displayName", label: "Display name", value: values.displayName ?? "", error: fields.displayName, required: true, placeholder: "Runbooks" })}
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
      const body = parseWith(CreateConnectionBody, {
        alias: values.alias,
        displayName: values.displayName,
        endpointUrl: values.endpointUrl,
        auth: authFromForm(values),
      });
      const created = await createConnection({ ctx: c.get("ctx"), input: { environmentId, ...body } });
      return c.redirect(`${connectionsPath(c.get("org").id, environmentId)}/${created.id}?done=created`, 303);
    } catch (error) {
      if (!isAppError(error) || error.status >= 500 || error.code === "forbidden") throw error;
      return createPage(c, {
        values,
        status: error.status as 400 | 409 | 422,
        error: refusalMessage(error),
        fields: connectionFieldErrors(fieldErrorsOf(error, connectionCodeFields)),
      });
    }
  });
}
