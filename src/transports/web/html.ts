import { html, raw } from "hono/html";

/** A fragment of escaped HTML. Interpolated strings are escaped; nested fragments are not. */
export type Html = ReturnType<typeof html>;

export { html, raw };

/** Nothing, for conditional parts of a template. */
export const nothing: Html = html``;

/** Joins fragments (e.g. a mapped list) into one. */
export const join = (parts: readonly Html[]): Html => html`${parts}`;

export const when = (condition: unknown, part: () => Html): Html => (condition ? part() : nothing);

/** Dates as the UI shows them: UTC, to the minute, unambiguous in every locale. */
export function formatTime(value: string | Date): string {
  const d = typeof value === "string" ? new Date(value) : value;
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A column header only screen readers get (an actions or status column). */
export const hiddenText = (text: string): Html => html`<span class="visually-hidden">${text}</span>`;

/** A data table with its caption for screen readers; `empty` stands in for a table without rows. */
export function dataTable(o: {
  caption?: Html | string;
  headers: readonly (Html | string)[];
  rows: readonly Html[];
  className?: string;
  empty?: Html;
}): Html {
  if (o.rows.length === 0 && o.empty) return o.empty;
  return tableScroll(html`<table${o.className ? html` class="${o.className}"` : nothing}>
  ${when(o.caption, () => html`<caption class="visually-hidden">${o.caption}</caption>`)}
  <thead><tr>${join(o.headers.map((h) => html`<th scope="col">${h}</th>`))}</tr></thead>
  <tbody>${join(o.rows)}</tbody>
</table>`);
}

/**
 * A table that is wider than a phone scrolls inside its own box, never the page. The box is
 * focusable so a keyboard can scroll it too.
 */
export const tableScroll = (table: Html): Html => html`<div class="table-scroll" tabindex="0">${table}</div>`;
