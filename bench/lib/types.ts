/**
 * The shapes every benchmark module and the harness agree on.
 */

/** What a benchmark's `run()` returns: named figures, numbers or short descriptive strings. */
export type Figures = Record<string, number | string>;

/** A benchmark module: anything exporting `run(options)` resolving to {@link Figures}. */
export interface BenchModule {
  run(options?: Record<string, unknown>): Promise<Figures>;
}

/** How big a run is: `small` for a quick check while iterating, `default` for published figures. */
export type BenchSize = 'small' | 'default';

/** A scenario figure read as a multiple of a baseline figure measured in the same run. */
export interface RatioSpec {
  /** The figure of this entry, e.g. `computeStatus evaluations/s`. */
  figure: string;
  /** The id of the baseline entry, e.g. `json-parse`. */
  baseline: string;
  /** The figure of the baseline, e.g. `objects/s`. */
  baselineFigure: string;
  /** How the ratio reads, e.g. `× JSON.parse objects/s`. */
  label: string;
  /** Multiplies the figure first, e.g. 0.001 to turn "bytes per 1,000 changes" into "per change". @default 1 */
  scale?: number;
}

/** A figure computed from an entry's figures that says what they mean for a user. */
export interface DerivedSpec {
  /** e.g. `worker ms per tick, 20,000-resource fleet` */
  name: string;
  /** Returns undefined when a figure it needs is missing. */
  compute(figures: Figures): number | string | undefined;
}

/** One benchmark the harness knows about, whether or not its module exists yet. */
export interface BenchEntry {
  /** Short id used by `--only` and in results, e.g. `read-path`. */
  id: string;
  kind: 'baseline' | 'scenario';
  /** Module path relative to the `bench/` folder, e.g. `read-path.ts`. */
  file: string;
  /** One line saying what is measured. */
  title: string;
  /** Options passed to `run()` for each size. */
  options: Record<BenchSize, Record<string, unknown>>;
  compare?: RatioSpec[];
  derive?: DerivedSpec[];
  /** Baselines only: measure again right before each scenario that compares with it (cheap ones). */
  refresh?: boolean;
  /** The child process is killed after this long. @default 300000 */
  timeoutMs?: number;
}

/** One ratio as computed after a run. */
export interface RatioResult {
  figure: string;
  value: number | undefined;
  baseline: string;
  baselineFigure: string;
  baselineValue: number | undefined;
  /** Whether the baseline was measured right before this entry or earlier in the run. */
  baselineWhen: 'just before' | 'earlier in the run' | undefined;
  /** figure / baseline figure, or undefined if either is missing or not a number. */
  ratio: number | undefined;
  label: string;
}

/** What happened to one entry in a run. */
export interface EntryResult {
  id: string;
  kind: 'baseline' | 'scenario';
  title: string;
  file: string;
  status: 'ok' | 'error' | 'not built yet' | 'timed out';
  seconds: number;
  /** The machine's 1-minute load average when the entry started (2 cores: above 2 means contention). */
  loadAverage1m?: number;
  options: Record<string, unknown>;
  figures?: Figures;
  derived?: Figures;
  ratios?: RatioResult[];
  error?: string;
}
