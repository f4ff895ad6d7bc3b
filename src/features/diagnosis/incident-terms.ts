/** Words that say nothing about where an incident is. */
const STOP_WORDS = new Set(
  (
    "the and for are but not you all any can had has have her was one our out get got its may new now " +
    "see two who did how let say she too use with that this from they will when what where which while " +
    "there their them then than been being were into onto over under after before since about again " +
    "some such only very just also more most much many other each every both few own same very does " +
    "doing done our ours your yours his him hers users user customers customer people someone seems " +
    "seem started start keeps keep getting still today yesterday since please help happening happened " +
    "issue issues problem problems incident broken broke failing fails failed failure error errors " +
    "working work works sometimes always never lot lots page pages app site service"
  ).split(" "),
);

const MAX_TERMS = 24;

/**
 * The searchable terms of an incident description, in order of appearance: lower-cased words
 * and identifiers (`OrderNotFoundError`, `/orders/:id`, `checkout-api`, `502`), with path
 * segments split out, stop words and short words dropped. Generic words such as "error" are
 * dropped too: every problem matches them, so they would only add noise to the ranking.
 */
export function incidentTerms(description: string): string[] {
  const terms = new Set<string>();
  const add = (raw: string) => {
    const term = raw.toLowerCase().replace(/^[-_.:/]+|[-_.:/]+$/g, "");
    if (term.length < 3 || STOP_WORDS.has(term) || /^\d{1,2}$/.test(term)) return;
    if (/^\d+$/.test(term) && !/^[1-5]\d\d$/.test(term)) return; // keep HTTP statuses, drop ids
    terms.add(term);
  };
  for (const token of description.match(/[A-Za-z0-9_][A-Za-z0-9_.\-/:]*/g) ?? []) {
    add(token);
    if (/[/.:]/.test(token)) for (const part of token.split(/[/.:]+/)) add(part);
    if (terms.size >= MAX_TERMS) break;
  }
  return [...terms].slice(0, MAX_TERMS);
}
