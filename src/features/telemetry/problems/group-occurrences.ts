import { MAX_SAMPLE_TRACE_IDS } from "../../../platform/db/schema/problems.ts";
import type { ProblemOccurrence } from "./fingerprint.ts";

/** An error log of a span whose exception belongs to the problem `fingerprint`: evidence on it. */
export type LinkedLog = { fingerprint: string; message: string; time: string };

/**
 * What one batch adds to one problem: a single upsert row. Times are ISO 8601. A delta of linked
 * logs only (`count` 0) has no identity, times or samples of its own: it changes a known problem's
 * log evidence and nothing else.
 */
export type ProblemDelta = {
  fingerprint: string;
  title: string | null;
  culprit: string | null;
  service: string | null;
  exceptionType: string | null;
  count: number;
  firstSeen: string | null;
  lastSeen: string | null;
  /** Distinct, newest first. */
  sampleTraceIds: string[];
  sampleMessage: string | null;
  sampleStacktrace: string | null;
  logCount: number;
  sampleLogMessage: string | null;
};

const MAX_MESSAGE_CHARS = 4096;

/** ISO strings of one format sort as their times do. */
const newestFirst = <T extends { time: string }>(items: T[]): T[] =>
  [...items].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));

/**
 * Folds a batch's occurrences and linked logs into one delta per fingerprint, so a batch costs one
 * upsert row per problem however many times it failed. Sorted by fingerprint: concurrent batches
 * then lock shared problem rows in one order and cannot deadlock.
 */
export function aggregateOccurrences(
  occurrences: ProblemOccurrence[],
  linked: LinkedLog[] = [],
): ProblemDelta[] {
  const deltas = new Map<string, ProblemDelta>();
  for (const [fingerprint, group] of groupBy(occurrences)) {
    const sorted = newestFirst(group);
    const newest = sorted[0] as ProblemOccurrence;
    const oldest = sorted.at(-1) as ProblemOccurrence;
    const traceIds = new Set<string>();
    for (const o of sorted) {
      if (traceIds.size >= MAX_SAMPLE_TRACE_IDS) break;
      if (o.traceId) traceIds.add(o.traceId);
    }
    deltas.set(fingerprint, {
      fingerprint,
      title: oldest.title,
      culprit: oldest.culprit,
      service: newest.service,
      exceptionType: newest.type,
      count: group.length,
      firstSeen: oldest.time,
      lastSeen: newest.time,
      sampleTraceIds: [...traceIds],
      sampleMessage: newest.message.slice(0, MAX_MESSAGE_CHARS),
      sampleStacktrace: sorted.find((o) => o.stacktrace)?.stacktrace ?? null,
      logCount: 0,
      sampleLogMessage: null,
    });
  }
  for (const [fingerprint, logs] of groupBy(linked)) {
    const evidence = {
      logCount: logs.length,
      sampleLogMessage: (newestFirst(logs)[0] as LinkedLog).message.slice(0, MAX_MESSAGE_CHARS),
    };
    const delta = deltas.get(fingerprint);
    deltas.set(
      fingerprint,
      delta ? { ...delta, ...evidence } : { ...evidenceOnly(fingerprint), ...evidence },
    );
  }
  return [...deltas.values()].sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : 1));
}

const evidenceOnly = (fingerprint: string): ProblemDelta => ({
  fingerprint,
  title: null,
  culprit: null,
  service: null,
  exceptionType: null,
  count: 0,
  firstSeen: null,
  lastSeen: null,
  sampleTraceIds: [],
  sampleMessage: null,
  sampleStacktrace: null,
  logCount: 0,
  sampleLogMessage: null,
});

function groupBy<T extends { fingerprint: string }>(items: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.fingerprint);
    if (group) group.push(item);
    else groups.set(item.fingerprint, [item]);
  }
  return groups;
}
