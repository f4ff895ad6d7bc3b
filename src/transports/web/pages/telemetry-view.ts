import type { Context } from "hono";
import type { ZodType } from "zod";
import { isAppError } from "../../../errors.ts";
import type { WebEnv } from "../env.ts";
import { type FieldErrors, fieldErrorsOf, parseWith, refusalMessage } from "../forms.ts";
import { type Html, html, nothing } from "../html.ts";
import type { EnvironmentSection } from "../layout.ts";

/** An environment page's path: `/orgs/:orgId/environments/:environmentId/<rest>`. */
export const environmentPath = (c: Context<WebEnv>, rest: EnvironmentSection | string): string =>
  `/orgs/${c.get("org").id}/environments/${c.get("environment").current.id}/${rest}`;

/**
 * Whether to show management buttons (keys, problem status, remediations). Only what the page
 * offers: a person's permissions are their role's (web-actor.ts), and the verbs still refuse a
 * member's hand-crafted form.
 */
export const mayManage = (c: Context<WebEnv>): boolean => c.get("org").role !== "member";

/** Query parameters as the form sent them, empty fields left out (a blank filter is no filter). */
export function queryValues(c: Context<WebEnv>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = c.req.query(name)?.trim();
    if (value) out[name] = value;
  }
  return out;
}

export type Filters<T> =
  | { ok: true; input: T }
  | { ok: false; message: string | undefined; fields: FieldErrors };

/** Validates a filter form with the REST route's own schema; a refusal is told field by field. */
export function parseFilters<T>(schema: ZodType<T>, values: Record<string, string>): Filters<T> {
  try {
    return { ok: true, input: parseWith(schema, values) };
  } catch (error) {
    return filterRefusal(error);
  }
}

/**
 * A verb's `invalid_request` about a filter (an unknown cursor, `from` after `to`) as a message on
 * the form, tied to the parameter it names; anything else is the error page's.
 */
export function filterRefusal(error: unknown): {
  ok: false;
  message: string | undefined;
  fields: FieldErrors;
} {
  if (!isAppError(error) || error.code !== "invalid_request") throw error;
  const fields = fieldErrorsOf(error);
  const parameter = error.details?.parameter;
  if (typeof parameter === "string" && !(parameter in fields)) fields[parameter] = error.message;
  return { ok: false, message: refusalMessage(error) ?? "Please correct the filters marked below.", fields };
}

/** The current filters plus a cursor, as the "next page" link. */
export function nextPageLink(
  path: string,
  values: Record<string, string>,
  nextCursor: string | null,
  label = "Next page",
): Html {
  if (!nextCursor) return nothing;
  const query = new URLSearchParams({ ...values, cursor: nextCursor });
  return html`<nav class="pager" aria-label="Pages"><a class="button secondary" href="${path}?${query.toString()}">${label} →</a></nav>`;
}

/** A link back to the first page when paging (cursors only go forward). */
export function firstPageLink(path: string, values: Record<string, string>): Html {
  if (!values.cursor) return nothing;
  const { cursor: _cursor, ...rest } = values;
  const query = new URLSearchParams(rest).toString();
  return html`<a href="${path}${query ? `?${query}` : ""}">← First page</a>`;
}

export const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** Milliseconds for people: 0.42 ms, 12.4 ms, 1.24 s, 2.5 min. */
export function formatDuration(ms: number): string {
  if (ms < 1) return `${Number(ms.toFixed(3))} ms`;
  if (ms < 1000) return `${Number(ms.toPrecision(3))} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toPrecision(3))} s`;
  return `${Number((ms / 60_000).toPrecision(3))} min`;
}

/** Requests per second, per minute when below one a second. */
export function formatRate(perSecond: number): string {
  if (perSecond === 0) return "0";
  if (perSecond >= 1) return `${Number(perSecond.toPrecision(3))}/s`;
  return `${Number((perSecond * 60).toPrecision(3))}/min`;
}

export const formatPercent = (ratio: number | null): string =>
  ratio === null ? "—" : `${Number((ratio * 100).toPrecision(3))} %`;

/** An attribute map as indented JSON (escaped by the template like any text). */
export const jsonText = (value: Record<string, unknown>): string => JSON.stringify(value, null, 2);
