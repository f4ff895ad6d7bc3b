import { performance } from "node:perf_hooks";

/**
 * A bench's last lines: run `main`, stop everything `shutdown` owns whatever happens (also on
 * Ctrl-C or SIGTERM, which first abort `interrupt` so loops stop), say how long it took, and exit
 * with `main`'s code (1 on a failure, 130 when interrupted).
 */
export async function runBench(args: {
  name: string;
  main: () => Promise<number>;
  shutdown: () => Promise<void>;
  interrupt: AbortController;
  log: (message: string) => void;
  startedAt: number;
}): Promise<never> {
  const { name, interrupt, log } = args;
  let interrupted = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      log(`${signal}: stopping the servers and cleaning up`);
      interrupt.abort();
      void args.shutdown().finally(() => process.exit(130));
    });
  }
  let code = 1;
  try {
    code = await args.main();
  } catch (error) {
    if (interrupt.signal.aborted) console.error(`\n${name} interrupted`);
    else
      console.error(
        `\n${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    code = 1;
  } finally {
    await args.shutdown();
    log(`done in ${((performance.now() - args.startedAt) / 1000).toFixed(0)} s`);
  }
  process.exit(code);
}
