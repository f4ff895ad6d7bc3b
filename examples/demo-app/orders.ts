/** The demo shop's domain code: where its two bugs live. */

export class OrderNotFoundError extends Error {
  override name = "OrderNotFoundError";
}

const orders = new Map([
  ["ord_1", { id: "ord_1", items: 2, totalCents: 4_200 }],
  ["ord_2", { id: "ord_2", items: 1, totalCents: 990 }],
]);

/**
 * Bug 1: the shop links to orders it has archived, and the lookup throws for them. The message
 * names the order, so every occurrence reads differently — but it is one problem.
 */
export function findOrder(id: string) {
  const order = orders.get(id);
  if (!order) throw new OrderNotFoundError(`order ${id} was not found`);
  return order;
}

/** Bug 2: a quantity typed as words ("two") is not parsed, and nothing catches it upstream. */
export function parseQuantity(raw: string): number {
  const quantity = Number(raw);
  if (!Number.isInteger(quantity) || quantity < 1) {
    throw new TypeError(`quantity ${JSON.stringify(raw)} is not a positive whole number`);
  }
  return quantity;
}
