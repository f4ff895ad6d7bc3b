/**
 * Polls `probe` until it returns a value (not undefined), or fails after `timeoutMs`, naming
 * `what` it waited for.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 5_000,
  what = "the condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
