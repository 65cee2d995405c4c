/**
 * The shapes every benchmark module and the harness agree on.
 */

/** What a benchmark's `run()` returns: named figures, numbers or short descriptive strings. */
export type Figures = Record<string, number | string>;

/** A benchmark module: anything exporting `run(options)` resolving to {@link Figures}. */
export interface BenchModule {
  run(options?: Record<string, unknown>): Promise<Figures>;
}
