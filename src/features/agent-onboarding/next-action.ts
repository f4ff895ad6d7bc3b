/**
 * A suggested next call (DESIGN §7), best first in every `next_actions` list. `price` is what
 * the call costs (`"$0.05"`) or `"free"`; `x_assumed_state`, when present, is echoed back so a
 * suggestion made for a state that has since changed is refused before any payment.
 */
export type NextAction = {
  action: string;
  method: "GET" | "POST";
  href: string;
  price: string;
  description: string;
  body?: Record<string, unknown>;
  x_assumed_state?: string;
};
