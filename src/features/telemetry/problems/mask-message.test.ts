import { describe, expect, test } from "vitest";
import { identifyProblem } from "./fingerprint.ts";
import { maskMessage } from "./mask-message.ts";

/** One error as different occurrences phrase it (variants) and the title they share. */
type Shape = { name: string; type: string; variants: string[]; title: string };

// Messages as the services and runtimes write them; a shape's variants differ only in data.
const shapes: Shape[] = [
  {
    name: "short prefixed ids",
    type: "ERROR log",
    variants: [
      "payment declined for customer usr_4rppz2",
      "payment declined for customer usr_c4r1nt",
      "payment declined for customer usr_9f8e7d6c5b4a",
    ],
    title: "ERROR log: payment declined for customer <id>",
  },
  {
    name: "Stripe: missing customer",
    type: "StripeInvalidRequestError",
    variants: ["No such customer: 'cus_NffrFeUfNV2Hib'", "No such customer: 'cus_PqRsTuVwXyZaBc'"],
    title: "StripeInvalidRequestError: No such customer: '<value>'",
  },
  {
    name: "Stripe: payment intent state",
    type: "StripeInvalidRequestError",
    variants: [
      "This PaymentIntent's payment_method could not be updated because it has a status of succeeded. (pi_3MtwBwLkdIwHu7ix28a3tqPa)",
      "This PaymentIntent's payment_method could not be updated because it has a status of succeeded. (pi_1Ab)",
    ],
    title:
      "StripeInvalidRequestError: This PaymentIntent's payment_method could not be updated because it has a status of succeeded. (<id>)",
  },
  {
    name: "Stripe: charge already refunded",
    type: "StripeInvalidRequestError",
    variants: [
      "Charge ch_3MmlLrLkdIwHu7ix0snN0B15 has already been refunded.",
      "Charge ch_9z has already been refunded.",
    ],
    title: "StripeInvalidRequestError: Charge <id> has already been refunded.",
  },
  {
    name: "GitHub: missing commit",
    type: "HttpError",
    variants: [
      "No commit found for SHA: 6dcb09b5b57875f334f61aebed695e2e4193db5e",
      "No commit found for SHA: a1b2c3d",
    ],
    title: "HttpError: No commit found for SHA: <hex>",
  },
  {
    name: "GitHub: rate limit",
    type: "HttpError",
    variants: [
      "API rate limit exceeded for 192.0.2.1. (But here's the good news: Authenticated requests get a higher rate limit.)",
      "API rate limit exceeded for 2001:db8::8a2e:370:7334. (But here's the good news: Authenticated requests get a higher rate limit.)",
    ],
    title:
      "HttpError: API rate limit exceeded for <ip>. (But here's the good news: Authenticated requests get a higher rate limit.)",
  },
  {
    name: "GitHub: issue not found",
    type: "HttpError",
    variants: [
      "Not Found - GET https://api.github.com/repos/acme/shop/issues/1347",
      "Not Found - GET https://api.github.com/repos/acme/shop/issues/2",
    ],
    title: "HttpError: Not Found - GET https://api.github.com/repos/acme/shop/issues/<n>",
  },
  {
    name: "Postgres: duplicate key",
    type: "DatabaseError",
    variants: [
      'duplicate key value violates unique constraint "users_email_key" Key (email)=(a@b.c) already exists.',
      'duplicate key value violates unique constraint "users_email_key" Key (email)=(jane.doe+shop@example.co.uk) already exists.',
    ],
    title:
      'DatabaseError: duplicate key value violates unique constraint "users_email_key" Key (email)=(<value>) already exists.',
  },
  {
    name: "Postgres: duplicate primary key",
    type: "DatabaseError",
    variants: [
      'duplicate key value violates unique constraint "orders_pkey" Key (id)=(42) already exists.',
      'duplicate key value violates unique constraint "orders_pkey" Key (id)=(Bob Smith) already exists.',
    ],
    title:
      'DatabaseError: duplicate key value violates unique constraint "orders_pkey" Key (id)=(<value>) already exists.',
  },
  {
    name: "Postgres: missing relation",
    type: "DatabaseError",
    variants: ['relation "invoices" does not exist'],
    title: 'DatabaseError: relation "invoices" does not exist',
  },
  {
    name: "Java: null pointer",
    type: "java.lang.NullPointerException",
    variants: ['Cannot invoke "String.length()" because "<local1>" is null'],
    title: 'java.lang.NullPointerException: Cannot invoke "String.length()" because "<local1>" is null',
  },
  {
    name: "Java: index out of bounds",
    type: "java.lang.ArrayIndexOutOfBoundsException",
    variants: ["Index 5 out of bounds for length 3", "Index 12 out of bounds for length 12"],
    title: "java.lang.ArrayIndexOutOfBoundsException: Index <n> out of bounds for length <n>",
  },
  {
    name: "Java: number format",
    type: "java.lang.NumberFormatException",
    variants: ['For input string: "abc"', 'For input string: "12x"', 'For input string: ""'],
    title: 'java.lang.NumberFormatException: For input string: "<value>"',
  },
  {
    name: "Python: missing key",
    type: "KeyError",
    variants: ["'user_42'", "'user_7'", "'user_9f3a'"],
    title: "KeyError: '<id>'",
  },
  {
    name: "Python: another missing key",
    type: "KeyError",
    variants: ["'sku'"],
    title: "KeyError: 'sku'",
  },
  {
    name: "Python: bad literal",
    type: "ValueError",
    variants: [
      "invalid literal for int() with base 10: 'abc'",
      "invalid literal for int() with base 10: '4.5'",
      "invalid literal for int() with base 10: 'usr_x1'",
    ],
    title: "ValueError: invalid literal for int() with base <n>: '<value>'",
  },
  {
    name: "Node: connection refused",
    type: "Error",
    variants: ["connect ECONNREFUSED 10.0.0.7:5432", "connect ECONNREFUSED 10.0.3.12:5433"],
    title: "Error: connect ECONNREFUSED <ip>:<n>",
  },
  {
    name: "Node: connection reset",
    type: "Error",
    variants: ["read ECONNRESET"],
    title: "Error: read ECONNRESET",
  },
  {
    name: "words with numbers and units are kept",
    type: "ERROR log",
    variants: [
      "utf8 decode failed for sha256 digest after 500ms",
      "utf8 decode failed for sha256 digest after 1500ms",
    ],
    title: "ERROR log: utf8 decode failed for sha256 digest after <n>ms",
  },
  {
    name: "uuids, hex and numbers",
    type: "ERROR log",
    variants: [
      "job 0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d failed at 0xdeadbeef after 3.5 s",
      "job 7c9e6679-7425-40de-944b-e07fc1f90ae7 failed at 0x1f after 12 s",
    ],
    title: "ERROR log: job <uuid> failed at <hex> after <n> s",
  },
];

const fingerprint = (type: string, message: string) =>
  identifyProblem({ service: "shop", type, message }).fingerprint;

describe("message masks", () => {
  test.each(shapes)("$name: variants share one fingerprint and title", ({ type, variants, title }) => {
    const identities = variants.map((message) => identifyProblem({ service: "shop", type, message }));
    expect(new Set(identities.map((i) => i.fingerprint)).size).toBe(1);
    for (const identity of identities) expect(identity.title).toBe(title);
  });

  test("distinct messages stay distinct problems", () => {
    const fingerprints = shapes.map((shape) => fingerprint(shape.type, shape.variants[0] ?? ""));
    expect(new Set(fingerprints).size).toBe(shapes.length);
    const pairs: [string, string][] = [
      ["connection refused", "connection reset"],
      [
        'duplicate key value violates unique constraint "users_email_key"',
        'duplicate key value violates unique constraint "orders_pkey"',
      ],
      ['relation "invoices" does not exist', 'relation "payments" does not exist'],
      ["payment declined for customer usr_4rppz2", "refund declined for customer usr_4rppz2"],
      ["'sku'", "'price'"],
      [
        'Cannot invoke "String.length()" because "<local1>" is null',
        'Cannot invoke "List.size()" because "<local1>" is null',
      ],
      ["Not Found - GET https://api.github.com/repos/acme/shop/issues/1", "Bad credentials"],
      ["sha256 mismatch", "md5 mismatch"],
    ];
    for (const [a, b] of pairs)
      expect(fingerprint("Error", a), `${a} / ${b}`).not.toBe(fingerprint("Error", b));
  });

  test("only the first line counts; words, snake_case names and versions are kept", () => {
    expect(maskMessage("  cart 7 is closed\n  at Cart.add (cart.ts:1:1)")).toBe("cart <n> is closed");
    expect(maskMessage("column users_email_key in api v2 of ipv4 module")).toBe(
      "column users_email_key in api v2 of ipv4 module",
    );
    expect(
      maskMessage("client secret pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH leaked"),
    ).toBe("client secret <id>_<id> leaked");
    expect(maskMessage("at 10:00:00 std::vector overflowed")).toBe("at <n>:<n>:<n> std::vector overflowed");
  });
});
