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
