/**
 * Series computed when scraped (queue depth, watch counts, active operations), registered in a
 * prom-client registry. prom-client's own metrics are filled by `set()` or `inc()` ahead of time
 * and would need a collect hook that resets and refills them; these hand the registry the values
 * read at scrape time as they are (the registry asks any registered object for `get()`).
 */
import type { Metric, Registry } from 'prom-client';

export type CollectedType = 'gauge' | 'counter';

/** One series: its labels and value. */
export interface CollectedValue {
  labels: Record<string, string>;
  value: number;
}

/** Options of {@link registerCollected}. */
export interface CollectedMetric {
  name: string;
  help: string;
  type: CollectedType;
  /** The series to print on this scrape. */
  collect: () => Promise<readonly CollectedValue[]> | readonly CollectedValue[];
}

/** Registers a metric whose series `collect` computes on each scrape. */
export function registerCollected(registry: Registry, metric: CollectedMetric): void {
  const object = {
    name: metric.name,
    help: metric.help,
    type: metric.type,
    aggregator: 'sum',
    collect: () => {},
    async get() {
      return {
        name: metric.name,
        help: metric.help,
        type: metric.type,
        aggregator: 'sum',
        values: await metric.collect(),
      };
    },
    reset: () => {},
  };
  // The registry only calls get() (and reads name/type); prom-client's Metric class adds nothing it uses.
  registry.registerMetric(object as unknown as Metric);
}
