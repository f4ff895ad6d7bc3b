const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Bounds on what one OTLP request may make us hold or store. The body limits cap memory per
 * request; the per-item limits keep one noisy span from dominating a row or a page of results.
 */
export const OTLP_LIMITS = {
  /** A gzip body as received. */
  maxCompressedBytes: 4 * MiB,
  /** The payload after decompression (or as received, when not compressed). */
  maxDecodedBytes: 8 * MiB,
  /** Attributes kept per span, event, link, log record, data point or resource. */
  maxAttributes: 128,
  maxKeyChars: 256,
  /** Attribute string values, status messages. */
  maxValueChars: 4 * KiB,
  /** `exception.stacktrace` and log bodies: stacks are what problem detection reads. */
  maxLongValueChars: 32 * KiB,
  /** Nested arrays / key-value lists inside one attribute value. */
  maxValueDepth: 4,
  maxArrayItems: 128,
  /** Characters and values across one attribute map, nested values included. */
  maxMapChars: 96 * KiB,
  maxMapNodes: 1024,
  maxNameChars: 1024,
  maxServiceNameChars: 256,
  maxEvents: 128,
  maxLinks: 32,
  maxBuckets: 512,
  /** Items stamped further ahead than this are rejected: they would outlive retention. */
  maxFutureSkewMs: 24 * 60 * 60 * 1000,
} as const;

export type OtlpLimits = typeof OTLP_LIMITS;
