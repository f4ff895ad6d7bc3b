/**
 * Masking of the variable parts of an error message, so that one error with different ids, values
 * and numbers in its message is one problem, while different errors — which differ in their words —
 * stay apart. Used when an occurrence has no in-app frames to group by, and for every title.
 */

/**
 * Token bounds: a letter or digit on either side means the match is inside a longer token; `_`
 * does not (`pi_…_secret_…` is two ids), and after `<` is a marker already.
 */
const START = "(?<![A-Za-z0-9<])";
const END = "(?![A-Za-z0-9])";

const to = (marker: string) => () => marker;

/** Variable parts, most specific first: a masked part cannot match a later rule. */
const masks: [RegExp, (token: string) => string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, to("<uuid>")],
  [/[\w.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+/gi, to("<email>")],
  [new RegExp(`${START}\\d{1,3}(?:\\.\\d{1,3}){3}${END}`, "g"), to("<ip>")],
  // IPv6, full or with `::` (times like 10:00:00 have neither eight groups nor `::`).
  [
    /(?<![\w:])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?)(?![\w:])/gi,
    (token) => (token === "::" ? token : "<ip>"),
  ],
  // Prefixed ids of any length (Stripe's cus_/pi_/ch_, usr_, key_, ghp_): the part after the
  // prefix has a digit or mixes cases; snake_case words (users_email_key) have neither.
  [
    new RegExp(
      `${START}[a-z][a-z0-9]{1,9}_(?:(?=[A-Za-z]*\\d)[A-Za-z0-9]+|(?=[a-z]*[A-Z])(?=[A-Z]*[a-z])[A-Za-z]{6,})${END}`,
      "g",
    ),
    to("<id>"),
  ],
  [new RegExp(`${START}0x[0-9a-f]+${END}`, "gi"), to("<hex>")],
  // Hex digests and short SHAs: hex with digits and letters (`cafe`, `added` are words).
  [new RegExp(`${START}(?=[0-9a-f]*\\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}${END}`, "gi"), to("<hex>")],
  // Base32/58/62 ids (4rppz2, c4r1nt): letters and digits alternating at least twice. A word with
  // a version or unit (utf8, sha256, x509, 500ms) switches once and is kept (its number masked).
  [new RegExp(`${START}[A-Za-z0-9]{5,}${END}`, "g"), (token) => (switches(token) >= 2 ? "<id>" : token)],
  // A quoted value closing the line after a colon is data: `base 10: 'abc'`, `For input string:
  // "x"`. Quoted names elsewhere (constraint "users_email_key", relation "x") tell errors apart.
  [/(?<=: )(['"])[^'"]*\1(?=[\s.,;!?)]*$)/g, (quoted) => `${quoted[0]}<value>${quoted[0]}`],
  // PostgreSQL's `Key (email)=(a@b.c)`: the column names the error, the value is data.
  [/(?<=\)=)\([^()]*\)/g, to("(<value>)")],
  [/(?<![A-Za-z0-9<])\d+(?:\.\d+)?/g, to("<n>")],
];

/**
 * The message's first line with uuids, emails, IP addresses, prefixed ids, hex, other id-like
 * tokens, trailing quoted values and numbers replaced by markers (`<uuid>`, `<email>`, `<ip>`,
 * `<id>`, `<hex>`, `<value>`, `<n>`); words, code names and quoted identifiers are kept.
 */
export function maskMessage(message: string): string {
  let out = message.trim().split("\n")[0] ?? "";
  for (const [pattern, replace] of masks) out = out.replace(pattern, (token) => replace(token));
  return out;
}

/** How often a token changes between letters and digits. */
function switches(token: string): number {
  let count = 0;
  for (let i = 1; i < token.length; i++) {
    if (isDigit(token[i]) !== isDigit(token[i - 1])) count++;
  }
  return count;
}

const isDigit = (char: string | undefined) => char !== undefined && char >= "0" && char <= "9";
