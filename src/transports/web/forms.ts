import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodType, z } from "zod";
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
  const { action, busy, label } = args;
  return html`<form method="post" action="${action}" class="${args.className ?? ""}"${attrs({
    "data-busy": busy,
    "aria-label": label,
  })} novalidate>${csrfField(c)}${args.body}</form>`;
}

const fieldId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/** Attributes in the order given: `true` is a bare attribute, a string one with that value; the rest is left out. */
const attrs = (list: Record<string, string | boolean | undefined>): Html =>
  join(
    Object.entries(list).map(([name, value]) =>
      value === true ? html` ${name}` : typeof value === "string" ? html` ${name}="${value}"` : nothing,
    ),
  );

const fieldErrorText = (name: string, error: string | undefined) =>
  when(error, () => html`<p class="field-error" id="${fieldId(name)}-error">${error}</p>`);

/**
 * A labelled control with its hint and error under it. An error marks the control invalid; both
 * are read out with it (`aria`, the control's last attributes).
 */
function field(
  o: { name: string; label: string; error?: string | undefined; hint?: string | undefined },
  control: (id: string, aria: Html) => Html,
): Html {
  const id = fieldId(o.name);
  const described = [o.hint ? `${id}-hint` : "", o.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const aria = attrs({
    "aria-invalid": o.error ? "true" : undefined,
    "aria-describedby": described || undefined,
  });
  return html`<div class="field${o.error ? " has-error" : ""}">
  <label for="${id}">${o.label}</label>
  ${control(id, aria)}
  ${when(o.hint, () => html`<p class="hint" id="${id}-hint">${o.hint}</p>`)}${fieldErrorText(o.name, o.error)}
</div>`;
}

export function inputField(o: {
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
}): Html {
  const { name, type = "text", required, autocomplete, placeholder, autofocus, readonly } = o;
  // A password is never sent back to the browser.
  const value = type === "password" ? undefined : o.value;
  return field(
    o,
    (id, aria) =>
      html`<input${attrs({ id, name, type, value, required, autocomplete, placeholder, autofocus, readonly })}${aria}>`,
  );
}

export function selectField(o: {
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value?: string | undefined;
  error?: string | undefined;
  hint?: string | undefined;
}): Html {
  return field(
    o,
    (id, aria) => html`<select id="${id}" name="${o.name}"${aria}>
    ${join(o.options.map((opt) => html`<option value="${opt.value}"${attrs({ selected: opt.value === o.value })}>${opt.label}</option>`))}
  </select>`,
  );
}

/** A group of checkboxes sharing one name, in a fieldset with a legend. */
export function checkboxGroup(o: {
  name: string;
  legend: string;
  options: readonly { value: string; label: string; hint?: string; disabled?: boolean }[];
  checked: ReadonlySet<string>;
  error?: string | undefined;
}): Html {
  return html`<fieldset class="field${o.error ? " has-error" : ""}"${attrs({
    "aria-describedby": o.error ? `${fieldId(o.name)}-error` : undefined,
  })}>
  <legend>${o.legend}</legend>
  ${join(
    o.options.map((opt, i) => {
      const id = `${fieldId(o.name)}-${i}`;
      return html`<div class="check">
    <input type="checkbox" id="${id}" name="${o.name}" value="${opt.value}"${attrs({ checked: o.checked.has(opt.value), disabled: opt.disabled })}>
    <label for="${id}">${opt.label}${when(opt.hint, () => html` <span class="hint">${opt.hint}</span>`)}</label>
  </div>`;
    }),
  )}
  ${fieldErrorText(o.name, o.error)}
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
 * A validator's issue in the words of a form: "Enter a value." rather than zod's "Too small:
 * expected string to have >=1 characters". Messages a schema words itself (a regex's or a
 * refinement's) are kept; they are written for people already.
 */
function humanMessage(issue: z.core.$ZodIssue): string {
  const ownWords = (message: string) => !/^(Too (small|big)|Invalid |Expected |Unrecognized )/i.test(message);
  switch (issue.code) {
    case "too_small":
      if (issue.origin === "string") {
        return Number(issue.minimum) <= 1 ? "Enter a value." : `Use at least ${issue.minimum} characters.`;
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return Number(issue.minimum) <= 1 ? "Choose at least one." : `Choose at least ${issue.minimum}.`;
      }
      return `Use ${issue.minimum} or more.`;
    case "too_big":
      if (issue.origin === "string") return `Use at most ${issue.maximum} characters.`;
      if (issue.origin === "array" || issue.origin === "set") return `Choose at most ${issue.maximum}.`;
      return `Use ${issue.maximum} or less.`;
    case "invalid_type":
      return issue.input === undefined || issue.input === "" ? "Enter a value." : "Enter a valid value.";
    case "invalid_value":
      return issue.values.length > 0 && issue.values.length <= 6
        ? `Choose one of: ${issue.values.map(String).join(", ")}.`
        : "Choose one of the options.";
    case "invalid_union":
      return "Choose one of the options.";
    case "invalid_format":
      if (ownWords(issue.message)) return issue.message;
      if (issue.format === "email") return "Enter an email address, like name@example.com.";
      if (issue.format === "url") return "Enter a full URL, like https://example.com/path.";
      return "Enter a value in the expected format.";
    case "unrecognized_keys":
      return `Not expected here: ${issue.keys.join(", ")}.`;
    default:
      return ownWords(issue.message) ? issue.message : "Enter a valid value.";
  }
}

/**
 * Validates a form's values with the same zod schema the REST route uses, failing the same way
 * (`invalid_request` with `errors: [{ path, message }]`), so the UI shows the API's messages.
 */
export function parseWith<T>(schema: ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: humanMessage(issue),
  }));
  const first = errors[0];
  const message = first ? `${first.path || "The form"}: ${first.message}` : "Invalid form.";
  throw new AppError("invalid_request", message, { errors });
}

/**
 * Runs every check of a form and refuses with all their field errors at once, so a person sees
 * every problem on the first submit rather than one after another. A check refuses by throwing
 * an `invalid_request` (parseWith, fieldError) or a code named in `codeFields` (e.g. the endpoint
 * URL's `invalid_endpoint_url` → endpointUrl); anything else is rethrown as it is.
 */
export function checkAll<T extends readonly unknown[]>(
  checks: { [K in keyof T]: () => T[K] },
  codeFields: Record<string, string> = {},
): T {
  const errors: { path: string; message: string }[] = [];
  const results = checks.map((check) => {
    try {
      return check();
    } catch (error) {
      if (!isAppError(error)) throw error;
      const field = codeFields[error.code];
      if (field) {
        errors.push({ path: field, message: error.message.replace(/^[A-Za-z.]+: /, "") });
        return undefined;
      }
      const listed = error.details?.errors;
      if (error.code !== "invalid_request" || !Array.isArray(listed)) throw error;
      errors.push(...(listed as { path: string; message: string }[]));
      return undefined;
    }
  });
  if (errors.length > 0) {
    const first = errors[0];
    throw new AppError("invalid_request", `${first?.path || "The form"}: ${first?.message}`, { errors });
  }
  return results as unknown as T;
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
