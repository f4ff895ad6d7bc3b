import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodType } from "zod";
import { AppError, isAppError } from "../../errors.ts";
import { parseFormBody } from "../http/form-body.ts";
import { csrfToken } from "./csrf.ts";
import type { WebEnv } from "./env.ts";
import { type Html, html, join, nothing, when } from "./html.ts";

/** Messages tied to form fields by name; `""` is the form as a whole. */
export type FieldErrors = Record<string, string>;

/** What a page with a form is rendered with besides its data: a refusal to show, or a note. */
export type FormState = {
  status?: ContentfulStatusCode;
  error?: string | undefined;
  fields?: FieldErrors;
  flash?: string | undefined;
};

/** The hidden `_csrf` input every POST form carries (see csrf.ts). */
export const csrfField = (c: Context<WebEnv>): Html =>
  html`<input type="hidden" name="_csrf" value="${csrfToken(c)}">`;

/** A POST form with its CSRF token. `busy` is what the button says while the server works. */
export function postForm(
  c: Context<WebEnv>,
  args: { action: string; body: Html; busy?: string; className?: string; label?: string },
): Html {
  return html`<form method="post" action="${args.action}" class="${args.className ?? ""}"${
    args.busy ? html` data-busy="${args.busy}"` : nothing
  }${args.label ? html` aria-label="${args.label}"` : nothing} novalidate>${csrfField(c)}${args.body}</form>`;
}

const fieldId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/** The message under a field, referenced by the input's aria-describedby. */
function describedBy(name: string, error: string | undefined, hint: string | undefined) {
  const ids = [hint ? `${fieldId(name)}-hint` : "", error ? `${fieldId(name)}-error` : ""].filter(Boolean);
  return ids.length ? html` aria-describedby="${ids.join(" ")}"` : nothing;
}

function messages(name: string, error: string | undefined, hint: string | undefined): Html {
  return html`${when(hint, () => html`<p class="hint" id="${fieldId(name)}-hint">${hint}</p>`)}${when(
    error,
    () => html`<p class="field-error" id="${fieldId(name)}-error">${error}</p>`,
  )}`;
}

type InputOptions = {
  name: string;
  label: string;
  value?: string | undefined;
  type?: "text" | "email" | "password" | "url";
  error?: string | undefined;
  hint?: string | undefined;
  required?: boolean;
  autocomplete?: string;
  placeholder?: string;
  autofocus?: boolean;
  readonly?: boolean;
};

/** A labelled input; an error marks it invalid and is read out with it. */
export function inputField(o: InputOptions): Html {
  const id = fieldId(o.name);
  return html`<div class="field${o.error ? " has-error" : ""}">
  <label for="${id}">${o.label}</label>
  <input id="${id}" name="${o.name}" type="${o.type ?? "text"}"${
    o.value !== undefined && o.type !== "password" ? html` value="${o.value}"` : nothing
  }${o.required ? html` required` : nothing}${o.autocomplete ? html` autocomplete="${o.autocomplete}"` : nothing}${
    o.placeholder ? html` placeholder="${o.placeholder}"` : nothing
  }${o.autofocus ? html` autofocus` : nothing}${o.readonly ? html` readonly` : nothing}${
    o.error ? html` aria-invalid="true"` : nothing
  }${describedBy(o.name, o.error, o.hint)}>
  ${messages(o.name, o.error, o.hint)}
</div>`;
}

type SelectOptions = {
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value?: string | undefined;
  error?: string | undefined;
  hint?: string | undefined;
};

export function selectField(o: SelectOptions): Html {
  const id = fieldId(o.name);
  return html`<div class="field${o.error ? " has-error" : ""}">
  <label for="${id}">${o.label}</label>
  <select id="${id}" name="${o.name}"${o.error ? html` aria-invalid="true"` : nothing}${describedBy(
    o.name,
    o.error,
    o.hint,
  )}>
    ${join(
      o.options.map(
        (opt) =>
          html`<option value="${opt.value}"${opt.value === o.value ? html` selected` : nothing}>${opt.label}</option>`,
      ),
    )}
  </select>
  ${messages(o.name, o.error, o.hint)}
</div>`;
}

/** A group of checkboxes sharing one name, in a fieldset with a legend. */
export function checkboxGroup(o: {
  name: string;
  legend: string;
  options: readonly { value: string; label: string; hint?: string; disabled?: boolean }[];
  checked: ReadonlySet<string>;
  error?: string | undefined;
}): Html {
  return html`<fieldset class="field${o.error ? " has-error" : ""}"${
    o.error ? html` aria-describedby="${fieldId(o.name)}-error"` : nothing
  }>
  <legend>${o.legend}</legend>
  ${join(
    o.options.map((opt, i) => {
      const id = `${fieldId(o.name)}-${i}`;
      return html`<div class="check">
    <input type="checkbox" id="${id}" name="${o.name}" value="${opt.value}"${
      o.checked.has(opt.value) ? html` checked` : nothing
    }${opt.disabled ? html` disabled` : nothing}>
    <label for="${id}">${opt.label}${when(opt.hint, () => html` <span class="hint">${opt.hint}</span>`)}</label>
  </div>`;
    }),
  )}
  ${when(o.error, () => html`<p class="field-error" id="${fieldId(o.name)}-error">${o.error}</p>`)}
</fieldset>`;
}

/** How the fields are called on the forms, for the summary's links. */
const fieldLabels: Record<string, string> = {
  alias: "Alias",
  authKind: "Authentication",
  confirm: "Repeat the password",
  displayName: "Display name",
  email: "Email",
  endpointUrl: "Endpoint URL",
  headerName: "API-key header name",
  name: "Name",
  password: "Password",
  permissions: "Permissions",
  role: "Role",
  // The telemetry pages' filters.
  cursor: "Page",
  from: "From",
  q: "Text",
  range: "Time range",
  service: "Service",
  severity: "Minimum severity",
  status: "Status",
  to: "To",
  traceId: "Trace id",
  window: "Window",
  toolNames: "Tools",
  value: "Credential",
};

/** A refusal of one field, worded for the person filling the form (shown next to it). */
export const fieldError = (field: string, message: string): AppError =>
  new AppError("invalid_request", message, { errors: [{ path: field, message }] });

/**
 * What a form's summary says about a refusal: a validation failure is told field by field (the
 * summary then just asks to correct them); any other refusal by its own message.
 */
export function refusalMessage(error: AppError): string | undefined {
  const errors = error.details?.errors;
  return error.code === "invalid_request" && Array.isArray(errors) && errors.length > 0
    ? undefined
    : error.message;
}

/** The summary at the top of a form that failed: announced at once, linked to the fields. */
export function errorSummary(message: string | undefined, fields: FieldErrors = {}): Html {
  // Links to the marked fields, unless the one message already says it all.
  const listed = Object.entries(fields).filter(([name, text]) => name !== "" && text !== message);
  if (!message && listed.length === 0) return nothing;
  return html`<div class="alert error" role="alert" tabindex="-1">
  <p>${message ?? "Please correct the fields marked below."}</p>
  ${when(
    listed.length > 0,
    () =>
      html`<ul>${join(
        listed.map(
          ([name, text]) =>
            html`<li><a href="#${fieldId(name)}">${fieldLabels[name] ?? name}: ${text}</a></li>`,
        ),
      )}</ul>`,
  )}
</div>`;
}

/** A success or information note (e.g. after a redirect). */
export const notice = (
  message: string | undefined,
  kind: "success" | "info" | "warning" = "success",
): Html => (message ? html`<div class="alert ${kind}" role="status">${message}</div>` : nothing);

/** A form value as one string; absent, repeated or a file upload count as "". */
export function formString(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  return typeof value === "string" ? value : "";
}

/** Every string value of a repeated field (checkboxes). */
export function formStrings(body: Record<string, unknown>, name: string): string[] {
  const value = body[name];
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all.filter((v): v is string => typeof v === "string");
}

/** A verb's refusal as the form shows it: its status, its message, the fields it marks. */
export const refusalState = (
  error: AppError,
  codeFields?: Record<string, string>,
): FormState & { fields: FieldErrors } => ({
  status: error.status as ContentfulStatusCode,
  error: refusalMessage(error),
  fields: fieldErrorsOf(error, codeFields),
});

/**
 * Validates a form's values with the same zod schema the REST route uses, failing the same way
 * (`invalid_request` with `errors: [{ path, message }]`), so the UI shows the API's messages.
 */
export function parseWith<T>(schema: ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = errors[0];
  const message = first ? `${first.path || "The form"}: ${first.message}` : "Invalid form.";
  throw new AppError("invalid_request", message, { errors });
}

/** The form body (already parsed and cached by verifyCsrf). */
export const readForm = (c: Context<WebEnv>): Promise<Record<string, unknown>> => parseFormBody(c);

/**
 * Field messages from an error: zod-style `errors: [{ path, message }]` details are tied to
 * their fields, as is a `field` detail; `codeFields` ties whole error codes to a field (e.g.
 * alias_taken → alias).
 */
export function fieldErrorsOf(error: unknown, codeFields: Record<string, string> = {}): FieldErrors {
  if (!isAppError(error)) return {};
  const out: FieldErrors = {};
  const details = error.details?.errors;
  if (Array.isArray(details)) {
    for (const item of details as { path?: unknown; message?: unknown }[]) {
      const path = typeof item.path === "string" ? item.path : "";
      if (typeof item.message === "string" && !(path in out)) out[path] = item.message;
    }
  }
  // Verbs that name the offending field (`details.field`, e.g. auth.headerName) get it marked too.
  const named = typeof error.details?.field === "string" ? error.details.field : undefined;
  const field = named ?? codeFields[error.code];
  if (field && !(field in out)) out[field] = error.message;
  return out;
}
