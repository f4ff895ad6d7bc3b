import { MAX_SAMPLE_TRACE_IDS } from "../../../platform/db/schema/problems.ts";
import type { ProblemOccurrence } from "./fingerprint.ts";

/** What one batch adds to one problem: a single upsert row. Times are ISO 8601. */
export type ProblemDelta = ReturnType<typeof aggregateOccurrences>[number];

const MAX_MESSAGE_CHARS = 4096;

/**
 * Folds a batch's occurrences into one delta per fingerprint, so a batch costs one upsert row per
 * problem however many times it failed. Sorted by fingerprint: concurrent batches then lock
 * shared problem rows in one order and cannot deadlock.
 */
export function aggregateOccurrences(occurrences: ProblemOccurrence[]) {
  const groups = new Map<string, ProblemOccurrence[]>();
  for (const occurrence of occurrences) {
    const group = groups.get(occurrence.fingerprint);
    if (group) group.push(occurrence);
    else groups.set(occurrence.fingerprint, [occurrence]);
  }
  const deltas = [...groups].map(([fingerprint, group]) => {
    // ISO strings of one format sort as their times do.
    const newestFirst = [...group].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
    const newest = newestFirst[0] as ProblemOccurrence;
    const oldest = newestFirst.at(-1) as ProblemOccurrence;
    const traceIds = new Set<string>();
    for (const o of newestFirst) {
      if (traceIds.size >= MAX_SAMPLE_TRACE_IDS) break;
      if (o.traceId) traceIds.add(o.traceId);
    }
    return {
      fingerprint,
      title: oldest.title,
      culprit: oldest.culprit,
      service: newest.service,
      exceptionType: newest.type,
      count: group.length,
      firstSeen: oldest.time,
      lastSeen: newest.time,
      /** Distinct, newest first. */
      sampleTraceIds: [...traceIds],
      sampleMessage: newest.message.slice(0, MAX_MESSAGE_CHARS),
      sampleStacktrace: newestFirst.find((o) => o.stacktrace)?.stacktrace ?? null,
    };
  });
  return deltas.sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : 1));
}
