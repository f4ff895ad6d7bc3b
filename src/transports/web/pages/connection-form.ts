import type { AuthInputValue } from "../../../features/connections/schemas.ts";
import { type FieldErrors, formString, inputField, selectField } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { authLabels } from "./connection-view.ts";

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
