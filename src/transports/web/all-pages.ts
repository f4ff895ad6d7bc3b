/**
 * Every item of a paginated verb, page after page. For pages that must show (or count) all of
 * them: an environment's connections against its limits, an organisation's keys.
 */
export async function allPages<T>(
  read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
}
