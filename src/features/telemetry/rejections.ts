/** Items refused from an otherwise accepted request: the count and why, for `partialSuccess`. */
export type Rejections = {
  count: number;
  add(reason: string): void;
  /** e.g. "2 spans rejected: trace_id must be 16 bytes and not all zero (2)". */
  message(noun: string): string;
};

/** Distinct reasons named in the message; the rest only add to the count. */
const MAX_REASONS = 5;

export function createRejections(): Rejections {
  const reasons = new Map<string, number>();
  let count = 0;
  return {
    get count() {
      return count;
    },
    add(reason) {
      count++;
      const seen = reasons.get(reason);
      if (seen !== undefined) reasons.set(reason, seen + 1);
      else if (reasons.size < MAX_REASONS) reasons.set(reason, 1);
    },
    message(noun) {
      const list = [...reasons].map(([reason, n]) => `${reason} (${n})`).join("; ");
      return `${count} ${noun} rejected: ${list}`;
    },
  };
}

/** What an ingest verb reports: how many items were stored, and which were refused and why. */
export type IngestResult = { accepted: number; rejected: { count: number; message: string } };

export const ingestResult = (accepted: number, rejected: Rejections, noun: string): IngestResult => ({
  accepted,
  rejected: { count: rejected.count, message: rejected.count > 0 ? rejected.message(noun) : "" },
});
