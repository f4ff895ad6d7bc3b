import type { Context } from "hono";
import type { ZodType } from "zod";
import { isAppError } from "../../../errors.ts";
import type { WebEnv } from "../env.ts";
import { errorSummary, type FieldErrors, fieldErrorsOf, parseWith, refusalMessage } from "../forms.ts";
import { type Html, html, when } from "../html.ts";
import { type EnvironmentSection, type PageOptions, renderPage } from "../layout.ts";

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
function queryValues(c: Context<WebEnv>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = c.req.query(name)?.trim();
    if (value) out[name] = value;
  }
  return out;
}

/**
 * A list filtered by query parameters, validated with the REST route's own schema and read with
 * its verb. A refused filter (or a verb's `invalid_request` about one: an unknown cursor, `from`
 * after `to`) re-renders the form with a 400, told field by field; any other refusal is the error
 * page's.
 */
export async function filteredPage<T, P>(
  c: Context<WebEnv>,
  o: Pick<PageOptions, "title" | "section"> & {
    names: readonly string[];
    schema: ZodType<T>;
    read: (input: T) => Promise<P>;
    form: (values: Record<string, string>, fields: FieldErrors, input: T | undefined) => Html;
    show: (page: P, form: Html, values: Record<string, string>) => Pick<PageOptions, "body" | "lead">;
  },
): Promise<Response> {
  const values = queryValues(c, o.names);
  let input: T | undefined;
  let page: P;
  try {
    input = parseWith(o.schema, values);
    page = await o.read(input);
  } catch (error) {
    if (!isAppError(error) || error.code !== "invalid_request") throw error;
    const fields = fieldErrorsOf(error);
    const parameter = error.details?.parameter;
    if (typeof parameter === "string" && !(parameter in fields)) fields[parameter] = error.message;
    const message = refusalMessage(error) ?? "Please correct the filters marked below.";
    return renderPage(c, {
      title: o.title,
      section: o.section,
      status: 400,
      body: html`${errorSummary(message, fields)}${o.form(values, fields, input)}`,
    });
  }
  return renderPage(c, {
    title: o.title,
    section: o.section,
    ...o.show(page, o.form(values, {}, input), values),
  });
}

/** Links to the first page (cursors only go forward) and, with the filters kept, to the next. */
export function pager(
  path: string,
  values: Record<string, string>,
  nextCursor: string | null,
  label = "Next page",
): Html {
  const { cursor, ...rest } = values;
  const first = new URLSearchParams(rest).toString();
  const next = new URLSearchParams({ ...values, cursor: nextCursor ?? "" }).toString();
  return html`<div class="actions">${when(cursor, () => html`<a href="${path}${first ? `?${first}` : ""}">← First page</a>`)}${when(
    nextCursor,
    () =>
      html`<nav class="pager" aria-label="Pages"><a class="button secondary" href="${path}?${next}">${label} →</a></nav>`,
  )}</div>`;
}

/** The time spans the pages offer, in words. */
export const periodLabels = {
  "5m": "Last 5 minutes",
  "15m": "Last 15 minutes",
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
} as const;

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
  // A rate always has its unit: "0/min", not a bare 0 next to a count of requests.
  if (perSecond === 0) return "0/min";
  if (perSecond >= 1) return `${Number(perSecond.toPrecision(3))}/s`;
  return `${Number((perSecond * 60).toPrecision(3))}/min`;
}

export const formatPercent = (ratio: number | null): string =>
  ratio === null ? "—" : `${Number((ratio * 100).toPrecision(3))} %`;

/** An attribute map as indented JSON (escaped by the template like any text). */
export const jsonText = (value: Record<string, unknown>): string => JSON.stringify(value, null, 2);
